"""Issue 23 defect 17: stored text that looks like markup reaches the snippet escaped, the
same on PostgreSQL as on SQLite.

On the landed code PostgreSQL's ``ts_headline`` parsed ``<script>...`` in the stored body
as a tag and dropped it (and, with ``MaxFragments=2``, text near it), while SQLite
returned it escaped as the search page promises: the same stored text gave different
snippets, and text a moderator needed to see (an attempted injection) vanished. Both
adapters run on their real databases.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.batteries.search.conftest import Opened, close_variant, open_variant, opened_variant

DB_VARIANTS = ("db-sqlite", "db-postgres")

STORED = [
    (
        "tag",
        "<script>alert('x')</script> The lunar module hatch opened.",
        "&lt;script&gt;alert('x')&lt;/script&gt; The <mark>lunar</mark> module hatch opened.",
    ),
    (
        "entity",
        "Fish &amp; chips on the lunar base &lt;b&gt; menu",
        "Fish &amp;amp; chips on the <mark>lunar</mark> base &amp;lt;b&amp;gt; menu",
    ),
    (
        "markup around",
        'Report: <img src=x onerror="steal()"> near the lunar crater <b>bold</b>',
        'Report: &lt;img src=x onerror="steal()"&gt; near the <mark>lunar</mark> crater '
        "&lt;b&gt;bold&lt;/b&gt;",
    ),
    (
        "comment",
        "before <!-- hidden note --> the lunar lander",
        "before &lt;!-- hidden note --&gt; the <mark>lunar</mark> lander",
    ),
]


@pytest.fixture(params=DB_VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    yield from opened_variant(request)


@pytest.mark.parametrize(("name", "body", "expected"), STORED, ids=[s[0] for s in STORED])
def test_markup_in_stored_text_is_escaped_in_the_snippet_on_every_database(
    opened: Opened, name: str, body: str, expected: str
) -> None:
    opened.search.index("articles", name, {"body": body})
    [hit] = opened.search.query("articles", "lunar").hits
    assert hit.snippet == expected


LONG = (
    " ".join(f"word{i}" for i in range(40))
    + " <script>steal(document.cookie)</script> the lunar module hatch opened & closed "
    + " ".join(f"tail{i}" for i in range(60))
)


def test_the_same_long_text_gives_the_same_snippet_on_sqlite_and_postgresql(
    request: pytest.FixtureRequest,
) -> None:
    snippets = {}
    for variant in DB_VARIANTS:
        handle = open_variant(variant, request)
        try:
            handle.search.index("articles", "long", {"body": LONG})
            [hit] = handle.search.query("articles", "lunar").hits
            snippets[variant] = hit.snippet
        finally:
            close_variant(handle)
    assert snippets["db-sqlite"] == snippets["db-postgres"], snippets
    snippet = snippets["db-sqlite"]
    assert "&lt;script&gt;steal(document.cookie)&lt;/script&gt;" in snippet
    assert "<mark>lunar</mark>" in snippet and "&amp; closed" in snippet
    assert snippet.startswith("… ") and snippet.endswith(" …")
    assert len(snippet.replace("… ", "").replace(" …", "").split()) == 24

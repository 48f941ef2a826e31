"""Pagination by cursor: every hit exactly once, however deep, and cursors cannot be forged.

The ``db`` adapter pages by keyset (the last hit's rank and row id, signed into the
cursor); ``searchengine`` keeps an offset cursor (the server has no keyset), also signed.
"""

from __future__ import annotations

import base64
import json

import pytest

from toolkit_batteries.search import SearchQueryError

from .conftest import close_variant, open_variant

DB_VARIANTS = ("db-sqlite", "db-postgres")


def walk(search, text: str, limit: int) -> list[str]:
    """Return every doc id of ``text``'s pages, following cursors to the end."""
    seen: list[str] = []
    cursor = None
    while True:
        page = search.query("articles", text, limit=limit, cursor=cursor, highlight=False)
        seen += page.doc_ids
        cursor = page.next_cursor
        if cursor is None:
            return seen


def equal_rank_documents(count: int) -> list[tuple[str, dict]]:
    """Return ``count`` documents whose text is the same: every query ranks them equal."""
    return [(f"doc{i:05d}", {"body": "lantern in the harbour at night"}) for i in range(count)]


def test_equal_ranks_page_through_every_id_exactly_once(opened):
    documents = equal_rank_documents(60)
    # A few better-ranked documents mixed in: ties are inside each rank group.
    documents += [(f"best{i}", {"body": "lantern lantern lantern harbour"}) for i in range(7)]
    opened.search.bulk_index("articles", documents)
    seen = walk(opened.search, "lantern", limit=9)
    assert sorted(seen) == sorted(doc_id for doc_id, _ in documents)
    assert len(seen) == len(documents)
    assert seen[:7] == sorted(seen[:7]) and set(seen[:7]) == {f"best{i}" for i in range(7)}


@pytest.mark.parametrize("variant", DB_VARIANTS)
def test_keyset_pagination_goes_past_ten_thousand_hits(variant, request):
    opened = open_variant(variant, request)
    try:
        documents = equal_rank_documents(10_050)
        for start in range(0, len(documents), 1000):
            opened.search.bulk_index("articles", documents[start : start + 1000])
        seen = walk(opened.search, "lantern", limit=100)
        assert len(seen) == 10_050 and len(set(seen)) == 10_050
    finally:
        close_variant(opened)


def test_a_document_indexed_between_pages_does_not_repeat_a_hit(request):
    # PostgreSQL's ts_rank_cd scores a row by its own text alone. (SQLite's BM25 weighs
    # corpus statistics, so any write there moves every rank: see docs/batteries/search.md.)
    opened = open_variant("db-postgres", request)
    try:
        opened.search.bulk_index("articles", equal_rank_documents(12))
        first = opened.search.query("articles", "lantern", limit=5)
        # Ranked above every hit already shown: an offset cursor would show doc00004 again.
        opened.search.index("articles", "newcomer", {"body": "lantern lantern lantern"})
        second = opened.search.query("articles", "lantern", limit=5, cursor=first.next_cursor)
        assert not set(first.doc_ids) & set(second.doc_ids)
        assert second.doc_ids == [f"doc{i:05d}" for i in range(5, 10)]
    finally:
        close_variant(opened)


def _payload(cursor: str) -> dict:
    """Return the JSON a cursor carries (its first dot- or colon-separated part)."""
    part = cursor.split(":")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def _unsigned(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def test_a_forged_or_edited_cursor_is_a_query_error(opened):
    opened.search.bulk_index("articles", equal_rank_documents(30))
    cursor = opened.search.query("articles", "lantern", limit=10).next_cursor
    fingerprint = _payload(cursor)["q"]
    forged = [
        _unsigned({"o": 3, "q": fingerprint}),  # an offset the client chose
        _unsigned({"p": [0.0, 1], "q": fingerprint}),  # a keyset position, unsigned
        cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB"),  # signature edited
        cursor + "x",
        "",
        "::",
    ]
    for bad in forged:
        with pytest.raises(SearchQueryError, match="not a search cursor") as info:
            opened.search.query("articles", "lantern", limit=10, cursor=bad or " ")
        assert f"search.{opened.instance}" in str(info.value)
        assert info.value.code == "invalid_argument"

"""One contract for every search adapter: db on SQLite, db on PostgreSQL, searchengine."""

from __future__ import annotations

import pytest

from tests.support.batteries import assert_opened_as
from toolkit_batteries.core.errors import ServiceUnavailableError, ToolkitError
from toolkit_batteries.search import (
    Document,
    Page,
    Search,
    SearchBatchTooLargeError,
    SearchDocumentNotFoundError,
    SearchError,
    SearchQueryError,
)
from toolkit_batteries.search.base import MAX_BATCH

MOON = {
    "title": "The landing",
    "body": "The lunar module touched down on the Sea of Tranquility in July.",
}
MARS = {"title": "Red planet", "body": "A rover crossed the dusty plains of Mars for years."}
SEA = {"title": "Tides", "body": "The sea rises and falls twice a day under the moon's pull."}


def fill(search: Search, index: str = "articles") -> None:
    search.bulk_index(
        index,
        [
            ("moon", MOON, {"lang": "en", "year": 1969, "featured": True}),
            ("mars", MARS, {"lang": "en", "year": 2012, "featured": False}),
            ("sea", SEA, {"lang": "fr", "year": 1969, "featured": False}),
        ],
    )


class TestSearchContract:
    """The same calls, the same answers, on every adapter."""

    def test_identity(self, opened):
        adapter = opened.variant.split("-")[0]
        assert_opened_as(
            opened.search, Search, adapter, opened.container, "search", opened.instance
        )

    def test_ping_answers_and_a_closed_service_refuses(self, opened):
        opened.search.ping()
        opened.container.close()
        with pytest.raises(ServiceUnavailableError):
            opened.search.query("articles", "lunar")

    def test_index_then_query_finds_the_document(self, opened):
        opened.search.index("articles", "moon", MOON, filters={"lang": "en"})
        page = opened.search.query("articles", "lunar module")
        assert isinstance(page, Page)
        assert page.doc_ids == ["moon"]
        hit = page.hits[0]
        assert hit.fields == MOON and hit.filters == {"lang": "en"}
        assert hit.score > 0
        assert opened.search.count("articles") == 1

    def test_every_word_must_match(self, opened):
        fill(opened.search)
        assert opened.search.query("articles", "sea moon").doc_ids == ["sea"]
        assert opened.search.query("articles", "rover tranquility").doc_ids == []

    def test_phrases_keep_word_order(self, opened):
        fill(opened.search)
        assert opened.search.query("articles", '"dusty plains"').doc_ids == ["mars"]
        assert opened.search.query("articles", '"plains dusty"').doc_ids == []

    def test_filters_match_exactly_and_combine(self, opened):
        fill(opened.search)
        english = opened.search.query("articles", "sea", filters={"lang": "en"})
        assert english.doc_ids == ["moon"]
        assert opened.search.query("articles", "sea", filters={"lang": "fr"}).doc_ids == ["sea"]
        assert opened.search.query("articles", "sea", filters={"year": 2012}).doc_ids == []
        both = opened.search.query("articles", "sea", filters={"year": [1969, 2012]})
        assert sorted(both.doc_ids) == ["moon", "sea"]
        featured = opened.search.query("articles", "sea", filters={"featured": True})
        assert featured.doc_ids == ["moon"]
        combined = opened.search.query("articles", "sea", filters={"year": 1969, "lang": "fr"})
        assert combined.doc_ids == ["sea"]

    def test_ranking_puts_the_denser_match_first(self, opened):
        opened.search.bulk_index(
            "articles",
            [
                ("thin", {"body": "A note on gardens, with one mention of comets far away."}),
                ("dense", {"body": "Comets, comets: every comet watcher loves comets."}),
            ],
        )
        page = opened.search.query("articles", "comets")
        assert page.doc_ids == ["dense", "thin"]
        assert page.hits[0].score > page.hits[1].score

    def test_snippets_mark_the_matches_and_escape_the_text(self, opened):
        opened.search.index(
            "articles", "html", {"body": "Use <b>bold</b> & the lunar module's hatch."}
        )
        hit = opened.search.query("articles", "lunar").hits[0]
        assert "<mark>lunar</mark>" in hit.snippet
        # Stored markup never reaches the page as markup: it is escaped on every adapter
        # (tests/security/test_search.py: the very same snippet on both databases).
        assert "<b>" not in hit.snippet and "&amp;" in hit.snippet
        assert opened.search.query("articles", "lunar", highlight=False).hits[0].snippet == ""

    def test_update_changes_some_fields_and_reindexes(self, opened):
        fill(opened.search)
        updated = opened.search.update(
            "articles", "mars", {"body": "An orbiter mapped the canyons."}, filters={"year": None}
        )
        assert updated.fields["title"] == "Red planet" and "year" not in updated.filters
        assert opened.search.query("articles", "canyons").doc_ids == ["mars"]
        assert opened.search.query("articles", "rover").doc_ids == []
        assert opened.search.get("articles", "mars") == updated
        with pytest.raises(SearchDocumentNotFoundError) as info:
            opened.search.update("articles", "pluto", {"body": "x"})
        assert info.value.code == "not_found" and opened.instance in str(info.value)

    def test_index_again_replaces_the_document(self, opened):
        opened.search.index("articles", "d", {"body": "first version"}, filters={"v": 1})
        opened.search.index("articles", "d", {"body": "second edition"})
        assert opened.search.query("articles", "first").doc_ids == []
        assert opened.search.query("articles", "edition").doc_ids == ["d"]
        assert opened.search.get("articles", "d") == Document("d", {"body": "second edition"}, {})
        assert opened.search.count("articles") == 1

    def test_delete_and_clear(self, opened):
        fill(opened.search)
        assert opened.search.delete("articles", "mars") is True
        assert opened.search.delete("articles", "mars") is False
        assert opened.search.query("articles", "rover").doc_ids == []
        assert opened.search.get("articles", "mars") is None
        assert opened.search.clear("articles") == 2
        assert opened.search.count("articles") == 0

    def test_indexes_are_separate(self, opened):
        opened.search.index("books", "1", {"body": "whales and the open ocean"})
        opened.search.index("films", "1", {"body": "whales on the big screen"})
        assert (
            opened.search.query("books", "whales").hits[0].fields["body"].startswith("whales and")
        )
        assert opened.search.query("films", "screen").doc_ids == ["1"]
        assert opened.search.query("books", "screen").doc_ids == []
        assert opened.search.query("nothing-here", "whales").doc_ids == []
        assert opened.search.count("nothing-here") == 0

    def test_pagination_by_cursor_walks_every_hit_once(self, opened):
        opened.search.bulk_index(
            "articles",
            [
                (f"doc{i:02d}", {"body": f"harbour lights number {i} " + "harbour " * (i % 5)})
                for i in range(23)
            ],
        )
        seen, cursor, pages = [], None, 0
        while True:
            page = opened.search.query("articles", "harbour", limit=10, cursor=cursor)
            seen += page.doc_ids
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages == 3 and len(seen) == 23 and len(set(seen)) == 23
        with pytest.raises(SearchQueryError, match="another query"):
            first = opened.search.query("articles", "harbour", limit=10)
            opened.search.query("articles", "lights", cursor=first.next_cursor)
        with pytest.raises(SearchQueryError, match="not a search cursor"):
            opened.search.query("articles", "harbour", cursor="garbage!!")

    def test_empty_query_is_a_clear_error(self, opened):
        fill(opened.search)
        for text in ("", "   ", '""', "-- * ()", '"'):
            with pytest.raises(SearchQueryError) as info:
                opened.search.query("articles", text)
            assert "empty" in str(info.value) and f"search.{opened.instance}" in str(info.value)
        assert opened.search.count("articles") == 3

    @pytest.mark.parametrize(
        "text",
        [
            'sea"',
            '"sea',
            "sea OR NOT mars",
            "sea NEAR(mars, 2)",
            "body:sea",
            "sea*",
            "-mars sea",
            "sea & !mars | (x",
            "sea'); DROP TABLE toolkit_search_document; --",
            "^sea +moon",
            "sea\\",
            'filters.lang = "en"',
        ],
    )
    def test_query_syntax_is_never_a_database_error(self, opened, text):
        fill(opened.search)
        page = opened.search.query("articles", text)
        assert isinstance(page, Page)
        assert all(isinstance(d, str) for d in page.doc_ids)
        assert opened.search.count("articles") == 3

    def test_operators_are_plain_words(self, opened):
        fill(opened.search)
        # "OR" is a word, not an operator: no document holds it, so nothing matches.
        assert opened.search.query("articles", "rover OR lunar").doc_ids == []
        assert opened.search.query("articles", "rover -lunar").doc_ids == []

    def test_oversize_batch_is_refused_whole(self, opened):
        fill(opened.search)
        batch = [(f"b{i}", {"body": f"bulk {i}"}) for i in range(MAX_BATCH + 1)]
        with pytest.raises(SearchBatchTooLargeError) as info:
            opened.search.bulk_index("articles", batch)
        message = str(info.value)
        assert str(MAX_BATCH) in message and "nothing was written" in message
        assert info.value.code == "out_of_range"
        assert len(batch) == MAX_BATCH + 1  # the caller still holds every document
        assert opened.search.count("articles") == 3
        assert opened.search.bulk_index("articles", batch[:MAX_BATCH]) == MAX_BATCH
        assert opened.search.count("articles") == 3 + MAX_BATCH

    def test_one_bad_document_refuses_the_batch(self, opened):
        batch = [("ok", {"body": "fine"}), ("bad", {"body": 42})]
        with pytest.raises(SearchError, match="item 1") as info:
            opened.search.bulk_index("articles", batch)
        assert "nothing was written" in str(info.value)
        assert opened.search.count("articles") == 0

    def test_duplicate_ids_in_a_batch_keep_the_last(self, opened):
        n = opened.search.bulk_index(
            "articles", [("x", {"body": "old words"}), ("x", {"body": "new words"})]
        )
        assert n == 1 and opened.search.get("articles", "x").fields == {"body": "new words"}

    @pytest.mark.parametrize(
        ("call", "fragment"),
        [
            (lambda s: s.index("bad name!", "1", {"body": "x"}), "index name"),
            (lambda s: s.index("articles", "", {"body": "x"}), "doc_id"),
            (lambda s: s.index("articles", "1", {}), "non-empty"),
            (lambda s: s.index("articles", "1", {"bo dy": "x"}), "field name"),
            (
                lambda s: s.index("articles", "1", {"body": "x"}, filters={"n": float("nan")}),
                "finite",
            ),
            (
                lambda s: s.index("articles", "1", {"body": "x"}, filters={"n": [1]}),
                "filter values",
            ),
            (lambda s: s.index("articles", "1", {"body": "a\x00b"}), "NUL"),
            (lambda s: s.index("articles", "1\x00", {"body": "x"}), "NUL"),
            (lambda s: s.query("articles", "x", filters={"a": "\x00"}), "NUL"),
            (lambda s: s.query("articles", "x", limit=0), "limit"),
            (lambda s: s.query("articles", "x", limit=101), "limit"),
            (lambda s: s.query("articles", "x", filters={"a": []}), "lists no value"),
            (lambda s: s.query("articles", "x" * 2000), "longer than"),
            (lambda s: s.bulk_index("articles", iter([("a", {"body": "x"})])), "list or tuple"),
        ],
    )
    def test_bad_arguments_are_clear_errors(self, opened, call, fragment):
        with pytest.raises(ToolkitError) as info:
            call(opened.search)
        assert fragment in str(info.value)
        assert str(info.value).startswith(f"search.{opened.instance}:")
        assert opened.search.count("articles") == 0

"""Whatever a user types, a query answers hits or SearchQueryError, never a database error."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit_batteries.search import Page, SearchQueryError

#: Characters FTS5, tsquery and the search server's query and filter languages treat
#: specially, mixed with letters so some queries match.
SPECIAL = "\"'*^:-+()[]{}<>|&!~\\/,.;=?% \t\nNEARORANDNOTsealunar_0123"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(alphabet=st.sampled_from(SPECIAL) | st.characters(), max_size=80),
    key_value=st.text(max_size=20),
)
def test_any_text_is_a_query_or_a_clear_error(opened, text, key_value):
    search = opened.search
    if search.count("fuzz") == 0:
        search.bulk_index(
            "fuzz",
            [
                ("a", {"body": "The sea and the lunar tides, NEAR and OR."}, {"k": "x\"'"}),
                ("b", {"body": 'Operators: AND, NOT, quotes " and stars *.'}, {"k": "y"}),
            ],
        )
    try:
        page = search.query("fuzz", text, filters={"k": key_value})
    except SearchQueryError as exc:
        assert str(exc).startswith(f"search.{opened.instance}: ")
        assert "the query" in str(exc) or "NUL" in str(exc)
    else:
        assert isinstance(page, Page)
        assert set(page.doc_ids) <= {"a", "b"}
    assert search.count("fuzz") == 2

"""The ``db`` adapter: full-text search in the project's SQL database, SQLite or PostgreSQL.

* Documents are rows of :class:`~toolkit_batteries.search.models.SearchDocument`
  (``toolkit_search_document``); the migration adds the full-text index per database
  and triggers keep it in step (:mod:`toolkit_batteries.search.models`). Opening checks
  that the table and the index exist and never runs DDL.
* **SQLite** (an empty ``dsn`` on the default ``db`` service, or a file path): an FTS5
  ``MATCH`` ranked by ``bm25()``, snippets by ``snippet()``. The tokenizer is fixed by
  the migration (Porter stemming for English, diacritics folded); ``language`` only
  labels the rows there.
* **PostgreSQL** (a ``postgres://`` ``dsn`` or a PostgreSQL ``db`` service): the stored
  ``search_vector`` (``to_tsvector(language, body)``, GIN-indexed) matched with
  ``plainto_tsquery`` / ``phraseto_tsquery`` in the instance's ``language``, ranked by
  ``ts_rank_cd``, snippets by ``ts_headline`` (computed for the page's rows only).
* Statements run on Django's connection for the alias
  (:func:`~toolkit_batteries.db.database_for`), so documents indexed inside the caller's
  ``transaction.atomic()`` commit or roll back with the caller's rows. A batch is one
  ``INSERT ... ON CONFLICT DO UPDATE`` in one transaction: all or nothing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.db.base import InstanceRows

from ..base import (
    HIGHLIGHT_END,
    HIGHLIGHT_START,
    SNIPPET_CUT,
    Document,
    FilterValue,
    Hit,
    Search,
    SearchRequest,
    cut_snippet,
)
from ..base import render_snippet as _render
from ..models import FTS_TABLE
from ..query import ParsedQuery

if TYPE_CHECKING:
    from toolkit_batteries.db import Database

__all__ = ["DBSearch", "search_sql"]

TABLE = "toolkit_search_document"
#: Longest instance name the ``instance`` column holds.
MAX_INSTANCE_LENGTH = 64
#: A text search configuration name (``english``, ``pg_catalog.simple``).
_LANGUAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?\Z")
#: ``ts_headline`` marks every matched word of the whole body (no fragments): the
#: snippet window is cut in Python (:func:`~toolkit_batteries.search.base.cut_snippet`),
#: the same rule as SQLite's, so the same stored text gives the same snippet.
_HEADLINE = f"StartSel={HIGHLIGHT_START}, StopSel={HIGHLIGHT_END}, HighlightAll=true"
#: ``<``, ``>`` and ``&`` hidden from ``ts_headline``'s HTML parser (which drops tags,
#: comments and the text near them) as private-use characters, restored in Python.
_HIDDEN = "\ue010\ue011\ue012"
_UNHIDE = tuple(zip(_HIDDEN, "<>&", strict=True))


def _unhide(text: str) -> str:
    """Return ``text`` with the hidden ``<``, ``>`` and ``&`` restored (a few replaces)."""
    for hidden, plain in _UNHIDE:
        if hidden in text:
            text = text.replace(hidden, plain)
    return text


#: Appended to a SQLite subquery so it is not flattened into its parent (see search_sql).
_UNFLATTENED = " LIMIT -1 OFFSET 0"
#: Characters of the highlighted text sent per row: before the first match, in all.
_SLICE_BEFORE = 400
_SLICE_LENGTH = 1600


def _sliced(expression: str, dialect: str) -> str:
    """Return SQL slicing highlighted ``expression`` around its first mark, cuts flagged.

    The databases mark the whole body; only a slice (``_SLICE_LENGTH`` characters from
    ``_SLICE_BEFORE`` before the first match) travels, with ``SNIPPET_CUT`` where it was
    cut. ``expression`` must be a column name (it is repeated).
    """
    find = "strpos" if dialect == "postgresql" else "instr"
    offset = f"max({find}({expression}, '{HIGHLIGHT_START}') - {_SLICE_BEFORE}, 1)"
    if dialect == "postgresql":
        offset = offset.replace("max(", "greatest(")
    return (
        f"CASE WHEN {offset} > 1 THEN '{SNIPPET_CUT}' ELSE '' END "
        f"|| substr({expression}, {offset}, {_SLICE_LENGTH}) "
        f"|| CASE WHEN length({expression}) >= {offset} + {_SLICE_LENGTH} "
        f"THEN '{SNIPPET_CUT}' ELSE '' END"
    )


def _model() -> Any:
    """Return the model class from Django's registry (its apps are ready by then)."""
    from django.apps import apps

    return apps.get_model("toolkit_search.SearchDocument")


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def _filter_sql(dialect: str, filters: Mapping[str, tuple[FilterValue, ...]]) -> tuple[str, list]:
    """Return `` AND ...`` clauses matching every filter, and their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    for key, values in filters.items():
        if dialect == "postgresql":
            clauses.append("(" + " OR ".join(["d.filters @> %s::jsonb"] * len(values)) + ")")
            params.extend(json.dumps({key: value}) for value in values)
        else:
            marks = ", ".join(["%s"] * len(values))
            clauses.append(f"json_extract(d.filters, %s) IN ({marks})")
            params.append(f"$.{key}")  # keys are checked identifiers
            params.extend(values)
    return "".join(f" AND {clause}" for clause in clauses), params


def _tsquery(query: ParsedQuery, language: str) -> tuple[str, list]:
    """Return a PostgreSQL tsquery expression of the parsed words, and its parameters."""
    parts: list[str] = []
    params: list[Any] = []
    if query.terms:
        parts.append("plainto_tsquery(%s::regconfig, %s)")
        params += [language, " ".join(query.terms)]
    for phrase in query.phrases:
        parts.append("phraseto_tsquery(%s::regconfig, %s)")
        params += [language, " ".join(phrase)]
    return "(" + " && ".join(parts) + ")", params


def search_sql(
    dialect: str,
    instance: str,
    index: str,
    query: ParsedQuery,
    filters: Mapping[str, tuple[FilterValue, ...]],
    limit: int,
    after: tuple[float, int] | None,
    highlight: bool,
    language: str = "english",
) -> tuple[str, list]:
    """Return the one statement (``%s`` placeholders) and parameters of a search.

    Public so the benchmark can run the very same SQL through the raw driver. Rows are
    ``(doc_id, fields, filters, score, marked snippet or '', rank, row id)``, best first.
    Pages are a keyset: ``after`` is the ``(rank, row id)`` of the previous page's last
    row (``None``: the first page), and ties in rank go by row id, so every matching row
    comes exactly once however deep the page, and page 1,000 costs what page 1 costs
    (no rows are skipped one by one, as ``OFFSET`` does). Only the page's rows are
    joined back for their text and highlighted.
    """
    where, filter_params = _filter_sql(dialect, filters)
    if dialect == "postgresql":
        tsq, tsq_params = _tsquery(query, language)
        # ts_rank_cd is a real: the cursor's rank is compared as a real, exactly. The
        # inner query's OFFSET 0 keeps it from being flattened into the keyset filter,
        # which would compute ts_rank_cd three times per matching row instead of once.
        keyset, keyset_params = "", []
        if after is not None:
            keyset = " WHERE (r.score < %s::real OR (r.score = %s::real AND r.id > %s))"
            keyset_params = [after[0], after[0], after[1]]
        headline = (
            "ts_headline(%s::regconfig, translate(d.body, '<>&', %s), " + tsq + ", %s)"
            if highlight
            else "''"
        )
        headline_params = [language, _HIDDEN, *tsq_params, _HEADLINE] if highlight else []
        snippet = _sliced("h.hl", dialect) if highlight else "''"
        # The slice reads h.hl five times; OFFSET 0 keeps the LATERAL subquery from being
        # pulled up, which would substitute (and run) ts_headline five times per row.
        sql = (
            f"SELECT d.doc_id, d.fields, d.filters, p.score, {snippet}, p.score, p.id "
            "FROM (SELECT r.id, r.score FROM (SELECT d.id, "
            f"ts_rank_cd(d.search_vector, {tsq})::real AS score FROM {TABLE} d "
            f"WHERE d.search_vector @@ {tsq} AND d.instance = %s AND d.index_name = %s"
            f"{where} OFFSET 0) r{keyset} ORDER BY r.score DESC, r.id LIMIT %s) p "
            f"JOIN {TABLE} d ON d.id = p.id, "
            f"LATERAL (SELECT {headline} AS hl OFFSET 0) h "
            "ORDER BY p.score DESC, p.id"
        )
        params = [
            *tsq_params,
            *tsq_params,
            instance,
            index,
            *filter_params,
            *keyset_params,
            limit,
            *headline_params,
        ]
        return sql, params
    # bm25() is lower for better rows; the cursor keeps it raw (the score is its negation).
    keyset, keyset_params = "", []
    if after is not None:
        keyset = f" AND (bm25({FTS_TABLE}) > %s OR (bm25({FTS_TABLE}) = %s AND d.id > %s))"
        keyset_params = [after[0], after[0], after[1]]
    # highlight() is computed per page row (a MATCH seeking one rowid), not for every
    # match the ranking sorts.
    marked = (
        f"(SELECT highlight({FTS_TABLE}, 0, %s, %s) FROM {FTS_TABLE} "
        f"WHERE {FTS_TABLE} MATCH %s AND {FTS_TABLE}.rowid = k.id)"
        if highlight
        else "''"
    )
    snippet_params = [HIGHLIGHT_START, HIGHLIGHT_END, query.fts5()] if highlight else []
    snippet = _sliced("p.hl", dialect) if highlight else "''"
    # The slice reads p.hl five times. SQLite flattens a plain subquery into its parent,
    # copying the highlight subquery (an FTS MATCH) into each read: five MATCHes per row.
    # A subquery with an OFFSET is never flattened (it runs as a co-routine), so
    # ``LIMIT -1 OFFSET 0`` (no limit, nothing skipped) computes the highlight once.
    sql = (
        f"SELECT p.doc_id, p.fields, p.filters, -p.rank, {snippet}, p.rank, p.id FROM ("
        f"SELECT d.doc_id, d.fields, d.filters, k.rank, k.id, {marked} AS hl FROM ("
        f"SELECT d.id, bm25({FTS_TABLE}) AS rank "
        f"FROM {FTS_TABLE} JOIN {TABLE} d ON d.id = {FTS_TABLE}.rowid "
        f"WHERE {FTS_TABLE} MATCH %s AND d.instance = %s AND d.index_name = %s{where}"
        f"{keyset} ORDER BY bm25({FTS_TABLE}), d.id LIMIT %s) k "
        f"JOIN {TABLE} d ON d.id = k.id{_UNFLATTENED}) p ORDER BY p.rank, p.id"
    )
    params = [
        *snippet_params,
        query.fts5(),
        instance,
        index,
        *filter_params,
        *keyset_params,
        limit,
    ]
    return sql, params


@traced("_write", "_get", "_delete", "_clear", "_count", "_search")
class DBSearch(InstanceRows, Search):
    """Full-text search over the ``SearchDocument`` table (FTS5 or tsvector + GIN)."""

    adapter_name = "db"

    def __init__(
        self, database: Database, *, language: str = "english", instance: str = "default"
    ) -> None:
        """Use ``database`` (a :class:`~toolkit_batteries.db.Database`) whose tables exist."""
        super().__init__(instance=instance)
        if len(instance) > MAX_INSTANCE_LENGTH:
            raise ConfigurationError(
                f"search.{instance[:MAX_INSTANCE_LENGTH]}...: the db adapter's instance names "
                f"are at most {MAX_INSTANCE_LENGTH} characters (the instance column)"
            )
        if not _LANGUAGE.match(language):
            raise InvalidOptionsError(
                "search", "language", "is not a text search configuration name", instance=instance
            )
        self.database = database
        self.language = language
        self._model = _model()
        self.dialect = database.dialect
        if self.dialect not in ("sqlite", "postgresql"):
            raise ConfigurationError(
                f"search.{instance}: the db adapter needs SQLite or PostgreSQL, not {self.dialect}"
            )

    @classmethod
    def open(cls, ctx: OpenContext) -> DBSearch:
        """Reach the database (borrowed or by ``dsn``); refuse it without the full-text index."""
        from toolkit_batteries.db import database_for, require_tables

        database = database_for(ctx)
        require_tables(database, _model(), service=ctx.service, instance=ctx.instance)
        search = cls(database, language=ctx.options.language or "english", instance=ctx.instance)
        search._require_fulltext()
        return search

    def _require_fulltext(self) -> None:
        """Raise MissingTablesError unless the migration's FTS objects exist."""
        from toolkit_batteries.db import MissingTablesError

        if self.dialect == "sqlite":
            sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s"
            params: tuple = (FTS_TABLE,)
            missing = FTS_TABLE
        else:
            sql = (
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = %s AND column_name = 'search_vector'"
            )
            params = (TABLE,)
            missing = f"{TABLE}.search_vector"
        if self._guarded(lambda: self.database.fetch_value(sql, params)) != 1:
            raise MissingTablesError("search", self.instance, self.database.alias, [missing])
        if self.dialect == "postgresql":
            self._check_language()

    def _check_language(self) -> None:
        from django.db import DatabaseError, transaction

        try:
            with transaction.atomic(using=self.database.alias):
                self.database.fetch_value("SELECT %s::regconfig::text", (self.language,))
        except DatabaseError:
            raise InvalidOptionsError(
                "search",
                "language",
                "is not a text search configuration of the database (see \\dF in psql)",
                instance=self.instance,
            ) from None

    # ------------------------------------------------------------------ primitives

    def _read_modify_write(self) -> Any:
        """``update`` runs in one transaction, so its read and write see one document."""
        from django.db import transaction

        return transaction.atomic(using=self.database.alias)

    def _write(self, index: str, documents: list[Document]) -> None:
        from django.db import transaction

        model = self._model
        objects = [
            model(
                instance=self.instance,
                index_name=index,
                doc_id=document.doc_id,
                language=self.language,
                fields=dict(document.fields),
                filters=dict(document.filters),
                body=document.body,
            )
            for document in documents
        ]

        def write() -> None:
            with transaction.atomic(using=self.database.alias):
                model.objects.using(self.database.alias).bulk_create(
                    objects,
                    update_conflicts=True,
                    unique_fields=["instance", "index_name", "doc_id"],
                    update_fields=["language", "fields", "filters", "body", "updated_at"],
                )

        self._guarded(write)

    def _get(self, index: str, doc_id: str) -> Document | None:
        row = self._guarded(
            lambda: (
                self._rows.filter(index_name=index, doc_id=doc_id)
                .values_list("fields", "filters")
                .first()
            )
        )
        return None if row is None else Document(doc_id, row[0], row[1] or {})

    def _delete(self, index: str, doc_id: str) -> bool:
        return self._guarded(
            lambda: self._rows.filter(index_name=index, doc_id=doc_id).delete()[0] > 0
        )

    def _clear(self, index: str) -> int:
        return self._guarded(lambda: self._rows.filter(index_name=index).delete()[0])

    def _count(self, index: str) -> int:
        return self._guarded(lambda: self._rows.filter(index_name=index).count())

    def _search_after(
        self, request: SearchRequest, after: tuple[float, int] | None
    ) -> list[tuple[Hit, Any]]:
        """Return a page by keyset: hits after ``(rank, row id)``, each with its own."""
        sql, params = search_sql(
            self.dialect,
            self.instance,
            request.index,
            request.query,
            request.filters,
            request.limit,
            after,
            request.highlight,
            self.language,
        )
        rows = self._guarded(lambda: self.database.fetch_all(sql, params))
        return [
            (
                Hit(
                    doc_id,
                    float(score),
                    _json(fields),
                    _json(filters_json) or {},
                    _render(_unhide(cut_snippet(snippet))) if snippet else "",
                ),
                [float(rank), int(row_id)],
            )
            for doc_id, fields, filters_json, score, snippet, rank, row_id in rows
        ]

    def _check_position(self, position: Any) -> tuple[float, int]:
        """Check a keyset position: ``[rank, row id]``, a finite number and an integer >= 0."""
        rank, row_id = position
        if isinstance(rank, bool) or not isinstance(rank, int | float) or not math.isfinite(rank):
            raise ValueError("the rank is a finite number")
        if isinstance(row_id, bool) or not isinstance(row_id, int) or row_id < 0:
            raise ValueError("the row id is a non-negative integer")
        return float(rank), row_id

    def ping(self) -> None:
        """Check the database answers (``SELECT 1``); raise ServiceUnavailableError."""
        self.database.ping()

    def close(self) -> None:
        """Stop using the database; the connection is Django's (or the ``db`` service's)."""
        self.database = ClosedResource(self.service_name, self.instance)  # type: ignore[assignment]

    def __repr__(self) -> str:
        closed = isinstance(self.database, ClosedResource)
        alias = "(closed)" if closed else self.database.alias
        return f"<{type(self).__name__} search.{self.instance} alias {alias}>"

"""The search service: index documents, then query them by words, filters and rank.

::

    search = services.search()
    search.index("articles", "42", {"title": "Moon landing", "body": text},
                 filters={"lang": "en", "year": 1969})
    page = search.query("articles", 'moon "landing site"', filters={"lang": "en"})
    for hit in page.hits:
        print(hit.doc_id, hit.score, hit.snippet)       # snippet: HTML with <mark>
    more = search.query("articles", 'moon "landing site"', cursor=page.next_cursor)

A document is an id (1 to 255 characters), text ``fields`` (``{"title": ..., "body":
...}``, searched together) and ``filters`` metadata (scalars: text, numbers, booleans)
that queries match exactly. Indexes are names (``articles``) inside one service instance.

This class checks every argument, parses the query (:mod:`.query`), encodes cursors and
renders snippets once for every adapter; adapters implement the primitives ``_write``,
``_get``, ``_delete``, ``_clear``, ``_count`` and ``_search``. Bad input raises a
:class:`SearchError` *before* anything is written, so a rejected batch leaves the index as
it was and the caller still holds every document.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import NotFoundError, ToolkitError

from .query import ParsedQuery, parse_query

__all__ = [
    "DEFAULT_LIMIT",
    "HIGHLIGHT_END",
    "HIGHLIGHT_START",
    "MAX_BATCH",
    "MAX_LIMIT",
    "Document",
    "FilterValue",
    "Hit",
    "Page",
    "Search",
    "SearchBatchTooLargeError",
    "SearchDocumentNotFoundError",
    "SearchError",
    "SearchQueryError",
    "SearchRequest",
    "cut_snippet",
    "render_snippet",
]

#: Most documents one ``bulk_index`` call takes (a larger batch is refused whole).
MAX_BATCH = 1000
#: Hits per page when ``limit`` is not given, and the most a page may hold.
DEFAULT_LIMIT = 10
MAX_LIMIT = 100
#: Deepest offset a cursor may reach on an adapter paging by offset (``searchengine``:
#: search servers cap it near here too). The ``db`` adapter pages by keyset, uncapped.
MAX_OFFSET = 10_000
#: Salt of the cursors' signature (``django.core.signing`` with ``SECRET_KEY``).
_CURSOR_SALT = "toolkit_batteries.search.cursor"
#: Longest document id, and most text one document may hold (over all its fields).
MAX_DOC_ID = 255
MAX_DOCUMENT_CHARS = 1_000_000
#: Index names, field names and filter keys: short identifiers every engine accepts.
_INDEX_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
#: Private-use characters the engines put around matched words; :func:`render_snippet`
#: escapes the text and turns them into ``<mark>`` tags (stored text cannot forge one).
HIGHLIGHT_START = "\ue000"
HIGHLIGHT_END = "\ue001"

FilterValue = str | int | float | bool


class SearchError(ToolkitError):
    """A search call was refused; the message names the service, instance and argument."""

    code = "invalid_argument"
    template = "search.{instance}: {message}"


class SearchQueryError(SearchError):
    """The query text, its filters, its limit or its cursor cannot be used."""


class SearchBatchTooLargeError(SearchError):
    """``bulk_index`` got more than :data:`MAX_BATCH` documents; nothing was written."""

    code = "out_of_range"


class SearchDocumentNotFoundError(NotFoundError, SearchError):
    """``update`` named a document the index does not hold (also a ``LookupError``)."""


@dataclass(frozen=True)
class Document:
    """One indexed document: its id, text fields and filter metadata."""

    doc_id: str
    fields: Mapping[str, str]
    filters: Mapping[str, FilterValue] = field(default_factory=dict)

    @property
    def body(self) -> str:
        """Return the searched text: every field's text, in field order."""
        return "\n\n".join(text for text in self.fields.values() if text)


@dataclass(frozen=True)
class Hit:
    """One result: the document, its score (higher is better) and an HTML snippet."""

    doc_id: str
    score: float
    fields: Mapping[str, str]
    filters: Mapping[str, FilterValue]
    #: Matched words wrapped in ``<mark>``, the rest HTML-escaped; empty when not asked.
    snippet: str = ""


@dataclass(frozen=True)
class Page:
    """One page of hits, best first, and the cursor of the next page (``None`` at the end)."""

    hits: list[Hit]
    next_cursor: str | None = None

    @property
    def doc_ids(self) -> list[str]:
        """Return the hits' document ids, in rank order."""
        return [hit.doc_id for hit in self.hits]


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A checked query as :meth:`Search.query` hands it to an adapter's primitives.

    One value instead of the same five parameters on every primitive, so the service, the
    offset default and each adapter's override agree on them in one place.
    """

    index: str
    query: ParsedQuery
    filters: Mapping[str, tuple[FilterValue, ...]]
    #: Most hits returned (the page's limit plus one, to tell whether a next page exists).
    limit: int
    highlight: bool


#: Marks where the database cut the highlighted text before sending it (see
#: :func:`cut_snippet`): the word it touches may be partial.
SNIPPET_CUT = "\ue003"
#: Words a database snippet keeps: a few before the first match, the rest after it.
SNIPPET_WORDS = 24
SNIPPET_WORDS_BEFORE = 6
_WORDS = re.compile(r"\S+")


def cut_snippet(marked: str, words: int = SNIPPET_WORDS) -> str:
    """Return a window of ``words`` words of fully highlighted text around its first match.

    Both databases return a slice of the stored text with every matched word marked,
    verbatim: PostgreSQL's ``ts_headline`` with ``HighlightAll`` over the body with ``<``,
    ``>`` and ``&`` hidden from its HTML parser, SQLite's ``highlight()``. One window rule
    here (``SNIPPET_WORDS_BEFORE`` words before the first match, the rest after it, moved
    back when the text ends first) makes the same stored text give the same snippet on
    both, with nothing dropped for looking like markup. ``…`` marks a cut. String
    splitting only (no per-word objects): it runs for every hit of every query.
    """
    cut_before = marked.startswith(SNIPPET_CUT)
    cut_after = marked.endswith(SNIPPET_CUT)
    text = marked.strip(SNIPPET_CUT)
    first = max(text.find(HIGHLIGHT_START), 0)
    while first > 0 and not text[first - 1].isspace():
        first -= 1  # the mark may sit inside a word: "(lunar)"
    head, tail = text[:first], text[first:]
    after = tail.split(None, words)  # at most ``words`` words, then the rest
    more_after = len(after) > words
    after = after[:words]
    if not more_after and cut_after and after:
        after.pop()  # the slice may have ended inside a word
    before = head.rsplit(None, words)
    more_before = len(before) > words
    before = before[1:] if more_before else before
    if not more_before and cut_before and before:
        before.pop(0)  # the slice may have started inside a word
        more_before = True
    take_before = min(len(before), max(SNIPPET_WORDS_BEFORE, words - len(after)))
    take_after = min(len(after), words - take_before)
    if take_before + take_after == 0:
        return ""
    # The window's ends are found by splitting once more with the counts taken: what a
    # split leaves unsplit ends (or starts) right where the window does, so the body
    # keeps the stored spacing and line breaks verbatim (one C call a side, not a
    # search per word).
    if take_before:
        kept = head.rsplit(None, take_before)
        rest = kept[0] if len(kept) > take_before else ""
        start = len(head) - len(head[len(rest) :].lstrip())  # past the gap after ``rest``
    else:
        start = first + len(tail) - len(tail.lstrip())
    if take_after:
        kept = tail.split(None, take_after)
        rest = kept[-1] if len(kept) > take_after else ""
        end = first + len(tail[: len(tail) - len(rest)].rstrip())
    else:
        end = len(head.rstrip())
    body = text[start:end]
    # A mark opened in the window and closed after it (a phrase cut) is closed here.
    if body.count(HIGHLIGHT_START) > body.count(HIGHLIGHT_END):
        body += HIGHLIGHT_END
    shown_all_before = take_before == len(before) and not more_before and not cut_before
    shown_all_after = take_after == len(after) and not more_after and not cut_after
    return ("" if shown_all_before else "… ") + body + ("" if shown_all_after else " …")


def render_snippet(marked: str) -> str:
    """Escape engine text for HTML and turn the highlight markers into ``<mark>`` tags."""
    escaped = html.escape(marked, quote=False)
    return escaped.replace(HIGHLIGHT_START, "<mark>").replace(HIGHLIGHT_END, "</mark>")


class Search(Service):
    """Base of the search adapters: argument checks, query parsing, cursors, batches."""

    service_name: ClassVar[str] = "search"

    def __init__(self, *, instance: str = "default") -> None:
        self.instance = instance

    # ------------------------------------------------------------------ writes

    def index(
        self,
        index: str,
        doc_id: str,
        fields: Mapping[str, str],
        *,
        filters: Mapping[str, FilterValue] | None = None,
    ) -> None:
        """Add the document, or replace every field and filter of an existing one."""
        self._check_index(index)
        self._write(index, [self._document(doc_id, fields, filters)])

    def update(
        self,
        index: str,
        doc_id: str,
        fields: Mapping[str, str | None] | None = None,
        *,
        filters: Mapping[str, FilterValue | None] | None = None,
    ) -> Document:
        """Change some fields or filters of an existing document; return the new document.

        A key mapped to ``None`` is removed. Raises :class:`SearchDocumentNotFoundError`
        when the index does not hold ``doc_id``.
        """
        self._check_index(index)
        self._check_doc_id(doc_id)
        with self._read_modify_write():
            current = self._get(index, doc_id)
            if current is None:
                raise SearchDocumentNotFoundError(
                    self.instance, f'index "{index}" holds no document with that id'
                )
            merged_fields = {**current.fields, **(fields or {})}
            merged_filters = {**current.filters, **(filters or {})}
            document = self._document(
                doc_id,
                {k: v for k, v in merged_fields.items() if v is not None},
                {k: v for k, v in merged_filters.items() if v is not None},
            )
            self._write(index, [document])
        return document

    def bulk_index(
        self, index: str, documents: Sequence[Document | tuple | Mapping[str, Any]]
    ) -> int:
        """Add or replace up to :data:`MAX_BATCH` documents at once; return how many.

        Each item is a :class:`Document`, a ``(doc_id, fields[, filters])`` tuple or a
        mapping with ``doc_id``, ``fields`` and optional ``filters``. Every item is checked
        before anything is written, and the batch is written as one unit: a refused
        batch (too large, one bad document) changes nothing. A later item with the same id
        replaces an earlier one.
        """
        self._check_index(index)
        if not isinstance(documents, Sequence) or isinstance(documents, str | bytes):
            raise SearchError(
                self.instance, "bulk_index takes a list or tuple of documents (a sized batch)"
            )
        if len(documents) > MAX_BATCH:
            raise SearchBatchTooLargeError(
                self.instance,
                f"bulk_index got {len(documents)} documents, more than the batch limit of "
                f"{MAX_BATCH}; nothing was written: split the batch (sync.index_queryset "
                "does it for a queryset)",
            )
        checked: dict[str, Document] = {}
        for position, item in enumerate(documents):
            try:
                document = self._coerce(item)
            except SearchError as exc:
                raise SearchError(
                    self.instance,
                    f"bulk_index item {position}: {str(exc).partition(': ')[2]}; "
                    "nothing was written",
                ) from None
            checked.pop(document.doc_id, None)
            checked[document.doc_id] = document
        if checked:
            self._write(index, list(checked.values()))
        return len(checked)

    def delete(self, index: str, doc_id: str) -> bool:
        """Remove a document; tell whether the index held it."""
        self._check_index(index)
        self._check_doc_id(doc_id)
        return self._delete(index, doc_id)

    def clear(self, index: str) -> int:
        """Remove every document of ``index``; return how many were removed (-1: unknown)."""
        self._check_index(index)
        return self._clear(index)

    # ------------------------------------------------------------------ reads

    def get(self, index: str, doc_id: str) -> Document | None:
        """Return the stored document, or ``None``."""
        self._check_index(index)
        self._check_doc_id(doc_id)
        return self._get(index, doc_id)

    def count(self, index: str) -> int:
        """Return how many documents ``index`` holds."""
        self._check_index(index)
        return self._count(index)

    def query(
        self,
        index: str,
        text: str,
        *,
        filters: Mapping[str, FilterValue | Sequence[FilterValue]] | None = None,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
        highlight: bool = True,
    ) -> Page:
        """Return the best-ranked documents matching ``text`` and every filter.

        ``text``: words (all must occur) and ``"quoted phrases"``; nothing else is an
        operator (:mod:`.query`). ``filters``: ``{key: value}`` matches documents whose
        filter equals the value, ``{key: [a, b]}`` either value. ``cursor``: the
        ``next_cursor`` of the previous page of the same query. Ranking is BM25 on SQLite,
        ``ts_rank_cd`` on PostgreSQL and the server's own on a search engine.
        """
        self._check_index(index)
        if not isinstance(text, str):
            raise SearchQueryError(self.instance, "the query must be text")
        try:
            parsed = parse_query(text)
        except ValueError as exc:
            raise SearchQueryError(self.instance, f"the query {exc}") from None
        if parsed.empty:
            raise SearchQueryError(
                self.instance, "the query is empty (it must hold at least one word)"
            )
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise SearchQueryError(self.instance, f"limit must be an integer from 1 to {MAX_LIMIT}")
        checked = self._query_filters(filters or {})
        fingerprint = self._fingerprint(index, parsed, checked)
        after = self._decode_cursor(cursor, fingerprint) if cursor else None
        request = SearchRequest(index, parsed, checked, limit + 1, highlight)
        found = self._search_after(request, after)
        hits = [hit for hit, _ in found[:limit]]
        more = len(found) > limit
        next_cursor = self._encode_cursor(found[limit - 1][1], fingerprint) if more else None
        return Page(hits, next_cursor)

    # ------------------------------------------------------------------ checks

    def _check_index(self, index: Any) -> None:
        if not isinstance(index, str) or not _INDEX_NAME.match(index):
            raise SearchError(
                self.instance,
                "an index name is 1 to 64 letters, digits, '_' or '-', starting with a "
                "letter or digit",
            )

    def _check_doc_id(self, doc_id: Any) -> None:
        if not isinstance(doc_id, str) or not doc_id or len(doc_id) > MAX_DOC_ID:
            raise SearchError(self.instance, f"a doc_id is a string of 1 to {MAX_DOC_ID} chars")
        if "\x00" in doc_id:
            raise SearchError(self.instance, "a doc_id cannot hold a NUL character")

    def _check_key(self, key: Any, what: str) -> None:
        if not isinstance(key, str) or not _KEY.match(key):
            raise SearchError(
                self.instance,
                f"a {what} name is 1 to 64 letters, digits or '_', not starting with a digit",
            )

    def _check_value(self, value: Any, what: str) -> FilterValue:
        if isinstance(value, str) and "\x00" in value:
            raise SearchError(self.instance, f"{what} values cannot hold a NUL character")
        if isinstance(value, bool | int | str):
            return value
        if isinstance(value, float) and math.isfinite(value):
            return value
        raise SearchError(
            self.instance, f"{what} values are text, integers, finite numbers or booleans"
        )

    def _document(self, doc_id: Any, fields: Any, filters: Mapping[str, Any] | None) -> Document:
        self._check_doc_id(doc_id)
        if not isinstance(fields, Mapping) or not fields:
            raise SearchError(self.instance, "fields must be a non-empty mapping of name to text")
        clean_fields: dict[str, str] = {}
        for name, text in fields.items():
            self._check_key(name, "field")
            if not isinstance(text, str):
                raise SearchError(self.instance, f'field "{name}" must be text')
            if "\x00" in text:
                # PostgreSQL text cannot hold it; refuse it everywhere alike.
                raise SearchError(self.instance, f'field "{name}" holds a NUL character')
            clean_fields[name] = text
        if sum(len(text) for text in clean_fields.values()) > MAX_DOCUMENT_CHARS:
            raise SearchError(
                self.instance, f"a document holds at most {MAX_DOCUMENT_CHARS} characters"
            )
        if filters is not None and not isinstance(filters, Mapping):
            raise SearchError(self.instance, "filters must be a mapping of name to value")
        clean_filters: dict[str, FilterValue] = {}
        for key, value in (filters or {}).items():
            self._check_key(key, "filter")
            clean_filters[key] = self._check_value(value, "filter")
        return Document(doc_id, clean_fields, clean_filters)

    def _coerce(self, item: Any) -> Document:
        if isinstance(item, Document):
            return self._document(item.doc_id, item.fields, item.filters)
        if isinstance(item, tuple) and len(item) in (2, 3):
            return self._document(item[0], item[1], item[2] if len(item) == 3 else None)
        if isinstance(item, Mapping) and "doc_id" in item:
            return self._document(item["doc_id"], item.get("fields"), item.get("filters"))
        raise SearchError(
            self.instance,
            "a document is a Document, a (doc_id, fields[, filters]) tuple or a mapping "
            "with doc_id and fields",
        )

    def _query_filters(self, filters: Any) -> dict[str, tuple[FilterValue, ...]]:
        if not isinstance(filters, Mapping):
            raise SearchQueryError(self.instance, "filters must be a mapping of name to value")
        checked: dict[str, tuple[FilterValue, ...]] = {}
        try:
            for key, wanted in filters.items():
                self._check_key(key, "filter")
                many = isinstance(wanted, list | tuple | set | frozenset)
                values = wanted if many else [wanted]
                if not values:
                    raise SearchQueryError(self.instance, f'filter "{key}" lists no value')
                checked[key] = tuple(self._check_value(v, "filter") for v in values)
        except SearchQueryError:
            raise
        except SearchError as exc:
            raise SearchQueryError(self.instance, str(exc).partition(": ")[2]) from None
        return checked

    # ------------------------------------------------------------------ cursors

    @staticmethod
    def _fingerprint(
        index: str, parsed: ParsedQuery, filters: Mapping[str, tuple[FilterValue, ...]]
    ) -> str:
        shape = json.dumps([index, parsed.digest(), sorted(filters.items())], default=str)
        return ParsedQuery((shape,), ()).digest()

    @staticmethod
    def _encode_cursor(position: Any, fingerprint: str) -> str:
        """Return the signed, opaque cursor of ``position`` (the last hit's place)."""
        from django.core import signing

        return signing.dumps({"p": position, "q": fingerprint}, salt=_CURSOR_SALT)

    def _decode_cursor(self, cursor: Any, fingerprint: str) -> Any:
        """Return the position a cursor of this query holds; SearchQueryError otherwise.

        Cursors are signed with the project's ``SECRET_KEY``, so an edited or forged one
        is refused here (a 4xx-style error), never reaching SQL as a position.
        """
        from django.core import signing

        try:
            data = signing.loads(str(cursor), salt=_CURSOR_SALT)
            position, owner = data["p"], data["q"]
        except (signing.BadSignature, ValueError, TypeError, KeyError):
            raise SearchQueryError(self.instance, "the cursor is not a search cursor") from None
        if owner != fingerprint:
            raise SearchQueryError(
                self.instance,
                "the cursor belongs to another query (same index, text and filters needed)",
            )
        try:
            return self._check_position(position)
        except (ValueError, TypeError):
            raise SearchQueryError(self.instance, "the cursor is not a search cursor") from None

    # ------------------------------------------------------------------ primitives

    def _read_modify_write(self) -> AbstractContextManager[Any]:
        """Return the block ``update`` reads and writes in (a transaction where there is one)."""
        return nullcontext()

    def _write(self, index: str, documents: list[Document]) -> None:
        """Add or replace ``documents`` (checked, unique ids) as one unit."""
        raise NotImplementedError

    def _get(self, index: str, doc_id: str) -> Document | None:
        """Return the stored document or ``None``."""
        raise NotImplementedError

    def _delete(self, index: str, doc_id: str) -> bool:
        """Delete one document; tell whether it existed."""
        raise NotImplementedError

    def _clear(self, index: str) -> int:
        """Delete every document of ``index``; return the count (-1 when unknown)."""
        raise NotImplementedError

    def _count(self, index: str) -> int:
        """Return how many documents ``index`` holds."""
        raise NotImplementedError

    def _search_after(self, request: SearchRequest, after: Any) -> list[tuple[Hit, Any]]:
        """Return up to ``request.limit`` hits ranked after ``after`` (``None``: the first).

        Each hit comes with its position, which the next page's cursor holds. This default
        pages by offset (the position is how many hits came before, capped at
        :data:`MAX_OFFSET`) for engines without keyset pagination; the ``db`` adapter
        overrides it with a keyset on (rank, row id).
        """
        offset = after or 0
        if offset + request.limit - 1 >= MAX_OFFSET:
            # No cursor past the cap: the last page ends there.
            request = replace(request, limit=MAX_OFFSET - offset)
        found = self._search(request, offset)
        return [(hit, offset + place + 1) for place, hit in enumerate(found)]

    def _check_position(self, position: Any) -> Any:
        """Return a decoded cursor's position checked for this adapter; ValueError if bad."""
        if isinstance(position, bool) or not isinstance(position, int):
            raise ValueError("an offset is an integer")
        if not 0 < position < MAX_OFFSET:
            raise ValueError("offset out of range")
        return position

    def _search(self, request: SearchRequest, offset: int) -> list[Hit]:
        """Return up to ``request.limit`` hits from rank ``offset`` on (offset paging)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} search.{self.instance}>"

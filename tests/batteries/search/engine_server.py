"""A strict stand-in for Meilisearch's HTTP API, on the shared provider-server base.

No Meilisearch binary is obtainable here (not in Debian, PyPI or npm), so this server
implements the documented wire format of the calls the ``searchengine`` adapter makes,
refuses what Meilisearch refuses and records every request for the tests to assert:

* ``GET /health``; ``GET /tasks/{uid}``;
* ``POST /indexes/{uid}/documents?primaryKey=id`` (add or replace; creates the index);
* ``GET|DELETE /indexes/{uid}/documents/{id}``, ``DELETE /indexes/{uid}/documents``;
* ``PATCH /indexes/{uid}/settings``; ``GET /indexes/{uid}/stats``;
* ``POST /indexes/{uid}/search`` with ``q`` (words and ``"phrases"``, all must match),
  ``filter`` (``a.b = v``, ``a.b IN [..]``, joined by ``AND``), ``offset``, ``limit``,
  highlight/crop tags and ``showRankingScore``.

**Writes are asynchronous**, as in Meilisearch: a write answers 202 with an ``enqueued``
task summary and changes nothing yet. A task is ``processing`` on its first poll and
``succeeded`` (or ``failed``) on its :attr:`EngineServer.polls_to_finish`-th, when it and
every task enqueued before it are applied in order; so an adapter that searches without
waiting on its task does not see its write. A document without its primary key or with an
id Meilisearch refuses fails its task (``missing_document_id``, ``invalid_document_id``).
The ``filterableAttributes`` setting counts only once its task has succeeded.

Refusals use the documented body ``{"message", "code", "type", "link"}``: no
``Authorization`` (401 ``missing_authorization_header``), another key (403
``invalid_api_key``), a body that is not ``application/json`` (415
``invalid_content_type``) or not JSON (400 ``malformed_payload``), an invalid index uid
(400 ``invalid_index_uid``), an unknown search parameter or setting (400 ``bad_request``),
a negative ``limit``/``offset`` (400 ``invalid_search_limit``/``invalid_search_offset``), a
malformed filter or one on an attribute that is not filterable (400
``invalid_search_filter``, never a dropped connection).

Ranking is a small BM25 over the documents' ``fields`` (the server's own ranking rules
are its business; the tests check the adapter's requests and answers, and that a phrase
finds its paragraph).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tests.support.provider_server import Answer, ProviderServer, Received

_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    return []


def _lookup(document: dict, path: str) -> Any:
    value: Any = document
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


_TOKEN = re.compile(
    r'"((?:[^"\\]|\\.)*)"|(true|false)|(-?[0-9][0-9.eE+-]*)|(\[|\]|,|=|IN|AND)|([A-Za-z_][A-Za-z0-9_.]*)|(\s+)',
    re.S,
)


def _tokens(expression: str) -> list[tuple[str, Any]]:
    """Split a filter into tokens: ("value", v), ("op", "="), ("name", "a.b")."""
    found: list[tuple[str, Any]] = []
    position = 0
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if match is None:
            raise ValueError(expression[position:])
        string, boolean, number, op, name, _space = match.groups()
        if string is not None:
            found.append(("value", re.sub(r"\\(.)", r"\1", string, flags=re.S)))
        elif boolean is not None:
            found.append(("value", boolean == "true"))
        elif number is not None:
            found.append(("value", json.loads(number)))
        elif op is not None:
            found.append(("op", op))
        elif name is not None:
            found.append(("name", name))
        position = match.end()
    return found


def _parse_filter(expression: str) -> list[tuple[str, list[Any]]]:
    """Parse ``a.b = v`` and ``a.b IN [v, ...]`` clauses joined by ``AND``."""
    tokens = _tokens(expression)
    clauses = []
    i = 0
    while i < len(tokens):
        kind, path = tokens[i]
        if kind != "name" or i + 2 >= len(tokens):
            raise ValueError(f"expected an attribute at token {i}")
        op = tokens[i + 1]
        if op == ("op", "=") and tokens[i + 2][0] == "value":
            clauses.append((path, [tokens[i + 2][1]]))
            i += 3
        elif op == ("op", "IN") and tokens[i + 2] == ("op", "["):
            values, i = [], i + 3
            while i < len(tokens) and tokens[i] != ("op", "]"):
                if tokens[i][0] == "value":
                    values.append(tokens[i][1])
                elif tokens[i] != ("op", ","):
                    raise ValueError(f"unexpected {tokens[i][1]!r} in a list")
                i += 1
            if i == len(tokens):
                raise ValueError("unclosed `[`")
            clauses.append((path, values))
            i += 1
        else:
            raise ValueError(f"expected `=` or `IN` after `{path}`")
        if i < len(tokens):
            if tokens[i] != ("op", "AND") or i + 1 == len(tokens):
                raise ValueError(f"expected `AND` at token {i}")
            i += 1
    return clauses


def _contains(sequence: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(sequence[i : i + n] == phrase for i in range(len(sequence) - n + 1))


def _mark(text: str, words: set[str], pre: str, post: str) -> str:
    return _WORD.sub(
        lambda m: f"{pre}{m.group(0)}{post}" if m.group(0).lower() in words else m.group(0), text
    )


def _crop(text: str, words: set[str], length: int, marker: str) -> str:
    tokens = text.split()
    if len(tokens) <= length:
        return text
    first = next((i for i, t in enumerate(tokens) if set(_words(t)) & words), 0)
    start = max(0, first - length // 2)
    piece = " ".join(tokens[start : start + length])
    return (marker if start else "") + piece + (marker if start + length < len(tokens) else "")


_INDEX_UID = re.compile(r"[A-Za-z0-9_-]{1,400}")
_DOCUMENT_ID = re.compile(r"[A-Za-z0-9_-]{1,511}")
_SEARCH_PARAMS = frozenset(
    [
        "q",
        "offset",
        "limit",
        "page",
        "hitsPerPage",
        "filter",
        "facets",
        "attributesToRetrieve",
        "attributesToCrop",
        "cropLength",
        "cropMarker",
        "attributesToHighlight",
        "highlightPreTag",
        "highlightPostTag",
        "showMatchesPosition",
        "sort",
        "matchingStrategy",
        "showRankingScore",
        "showRankingScoreDetails",
        "attributesToSearchOn",
        "rankingScoreThreshold",
        "locales",
        "distinct",
        "hybrid",
        "vector",
        "retrieveVectors",
    ]
)
_SETTINGS = frozenset(
    [
        "displayedAttributes",
        "searchableAttributes",
        "filterableAttributes",
        "sortableAttributes",
        "rankingRules",
        "stopWords",
        "synonyms",
        "distinctAttribute",
        "typoTolerance",
        "faceting",
        "pagination",
        "proximityPrecision",
        "separatorTokens",
        "nonSeparatorTokens",
        "dictionary",
        "embedders",
        "searchCutoffMs",
        "localizedAttributes",
        "facetSearch",
        "prefixSearch",
    ]
)


def _error(status: int, code: str, message: str, kind: str = "invalid_request") -> Answer:
    link = f"https://docs.meilisearch.com/errors#{code}"
    return status, {"message": message, "code": code, "type": kind, "link": link}


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class EngineServer(ProviderServer):
    """The server, its stored indexes, its task queue and the requests it received."""

    content_types = ("application/json",)

    def __init__(self, api_key: str) -> None:
        super().__init__(api_key)
        self.api_key = api_key
        self.indexes: dict[str, dict[str, dict]] = {}
        self.settings: dict[str, dict] = {}
        self.tasks: dict[int, dict] = {}
        #: Polls of ``GET /tasks/{uid}`` a task takes to finish (1: at once).
        self.polls_to_finish = 2
        self._pending: list[tuple[int, Callable[[], dict[str, Any] | None]]] = []
        self._polls: dict[int, int] = {}
        self._state = threading.RLock()

    def start(self) -> EngineServer:
        super().start()
        return self

    @property
    def requests(self) -> list[dict]:  # type: ignore[override]
        """Every request as ``{"method", "path", "query", "headers", "body"}``."""
        return [
            {
                "method": r.method,
                "path": r.path,
                "query": r.query,
                "headers": r.headers,
                "body": r.body,
            }
            for r in self._records()
        ]

    # ------------------------------------------------------------------ refusals

    def authorized(self, headers: dict[str, str]) -> bool:
        auth = headers.get("authorization")
        return auth is None or auth == f"Bearer {self.key}"

    def unauthorized(self) -> Answer:
        return _error(403, "invalid_api_key", "The provided API key is invalid.", "auth")

    def bad_request(self, message: str) -> Answer:
        return _error(400, "malformed_payload", message)

    def malformed(self, request: Received) -> Answer | None:
        if request.header("authorization") is None:
            return _error(
                401,
                "missing_authorization_header",
                "The Authorization header is missing. It must use the bearer authorization method.",
                "auth",
            )
        # Only routes taking a payload read the body (the client sends ``null`` on DELETE).
        if request.raw and request.method in ("POST", "PUT", "PATCH"):
            if request.content_type not in self.content_types:
                return _error(
                    415,
                    "invalid_content_type",
                    f"The Content-Type `{request.content_type}` is invalid. Accepted values "
                    "for the Content-Type header are: `application/json`",
                )
            try:
                json.loads(request.raw)
            except ValueError:
                return self.bad_request("The json payload provided is malformed.")
        segments = [s for s in request.path.split("/") if s]
        if len(segments) >= 2 and segments[0] == "indexes":
            if not _INDEX_UID.fullmatch(segments[1]):
                return _error(
                    400, "invalid_index_uid", f"`{segments[1]}` is not a valid index uid."
                )
            what = segments[2] if len(segments) > 2 else ""
            if what == "search" and request.method == "POST":
                return self._search_refusal(segments[1], request.body)
            if what == "settings" and request.method == "PATCH":
                unknown = sorted(set(request.body or {}) - _SETTINGS)
                if not isinstance(request.body, dict) or unknown:
                    return _error(400, "bad_request", f"Unknown field `{unknown[:1]}`")
            if (
                what == "documents"
                and request.method == "POST"
                and not isinstance(request.body, (list, dict))
            ):
                return self.bad_request("The json payload provided is malformed.")
        return None

    def _search_refusal(self, index: str, body: Any) -> Answer | None:
        if not isinstance(body, dict):
            return _error(400, "bad_request", "The search body is not a JSON object.")
        unknown = sorted(set(body) - _SEARCH_PARAMS)
        if unknown:
            return _error(
                400,
                "bad_request",
                f"Unknown field `{unknown[0]}`: expected one of {sorted(_SEARCH_PARAMS)}",
            )
        for name in ("limit", "offset"):
            value = body.get(name, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                return _error(
                    400,
                    f"invalid_search_{name}",
                    f"Invalid value type at `.{name}`: expected a positive integer",
                )
        expression = body.get("filter")
        if expression:
            if not isinstance(expression, str):
                return _error(400, "invalid_search_filter", "Invalid value type at `.filter`")
            try:
                clauses = _parse_filter(expression)
            except ValueError as exc:
                return _error(400, "invalid_search_filter", f"Was expecting an operation: {exc}")
            with self._state:
                allowed = self.settings.get(index, {}).get("filterableAttributes", [])
            for path, _ in clauses:
                if path.split(".")[0] not in allowed:
                    return _error(
                        400,
                        "invalid_search_filter",
                        f"Attribute `{path}` is not filterable. Available filterable "
                        f"attributes are: `{', '.join(allowed)}`.",
                    )
        return None

    # ------------------------------------------------------------------ tasks

    def task(self, index: str, kind: str, details: dict, apply: Callable[[], dict | None]) -> dict:
        """Enqueue a task whose change is ``apply`` (returns an error body, or ``None``)."""
        with self._state:
            uid = len(self.tasks)
            now = _now()
            self.tasks[uid] = {
                "uid": uid,
                "indexUid": index,
                "status": "enqueued",
                "type": kind,
                "details": details,
                "error": None,
                "duration": None,
                "enqueuedAt": now,
                "startedAt": None,
                "finishedAt": None,
            }
            self._pending.append((uid, apply))
        return {
            "taskUid": uid,
            "indexUid": index,
            "status": "enqueued",
            "type": kind,
            "enqueuedAt": now,
        }

    def settle(self, upto: int | None = None) -> None:
        """Process the queued tasks in order, up to ``upto`` (all when ``None``)."""
        with self._state:
            while self._pending and (upto is None or self._pending[0][0] <= upto):
                uid, apply = self._pending.pop(0)
                error = apply()
                task = self.tasks[uid]
                task["startedAt"] = task["startedAt"] or _now()
                task.update(
                    status="failed" if error else "succeeded",
                    error=error,
                    duration="PT0.001S",
                    finishedAt=_now(),
                )

    def _poll(self, uid: int) -> dict | None:
        with self._state:
            task = self.tasks.get(uid)
            if task is None:
                return None
            self._polls[uid] = self._polls.get(uid, 0) + 1
            if task["status"] == "enqueued":
                task.update(status="processing", startedAt=_now())
            if self._polls[uid] >= self.polls_to_finish:
                self.settle(uid)
            return dict(task)

    # ------------------------------------------------------------------ search

    def search(self, index: str, body: dict) -> dict:
        documents = list(self.indexes.get(index, {}).values())
        query = str(body.get("q") or "")
        parts = query.split('"')
        terms = [w for i, p in enumerate(parts) if i % 2 == 0 for w in _words(p)]
        phrases = [_words(p) for i, p in enumerate(parts) if i % 2 and _words(p)]
        wanted = set(terms) | {w for p in phrases for w in p}
        clauses = _parse_filter(body["filter"]) if body.get("filter") else []
        tokenized = {id(d): _words(" ".join(_texts(d.get("fields", {})))) for d in documents}
        average = sum(len(t) for t in tokenized.values()) / max(len(documents), 1)
        frequency = {w: sum(1 for t in tokenized.values() if w in t) for w in wanted}
        scored = []
        for document in documents:
            tokens = tokenized[id(document)]
            if any(_lookup(document, path) not in values for path, values in clauses):
                continue
            if not all(t in tokens for t in terms) or not all(
                _contains(tokens, p) for p in phrases
            ):
                continue
            score = 0.0
            for word in wanted:
                tf = tokens.count(word)
                idf = math.log(
                    1 + (len(documents) - frequency[word] + 0.5) / (frequency[word] + 0.5)
                )
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(tokens) / (average or 1)))
            scored.append((score, document))
        scored.sort(key=lambda pair: -pair[0])
        top = max((s for s, _ in scored), default=1.0) or 1.0
        offset, limit = int(body.get("offset", 0)), int(body.get("limit", 20))
        hits = []
        pre, post = body.get("highlightPreTag", "<em>"), body.get("highlightPostTag", "</em>")
        for score, document in scored[offset : offset + limit]:
            hit = json.loads(json.dumps(document))
            if body.get("attributesToHighlight") or body.get("attributesToCrop"):
                fields = {}
                for name, text in document.get("fields", {}).items():
                    if body.get("attributesToCrop"):
                        text = _crop(
                            text,
                            wanted,
                            int(body.get("cropLength", 10)),
                            body.get("cropMarker", "…"),
                        )
                    fields[name] = _mark(text, wanted, pre, post)
                hit["_formatted"] = {**hit, "fields": fields}
            if body.get("showRankingScore"):
                hit["_rankingScore"] = score / top
            hits.append(hit)
        return {
            "hits": hits,
            "query": query,
            "processingTimeMs": 0,
            "limit": limit,
            "offset": offset,
            "estimatedTotalHits": len(scored),
        }

    # ------------------------------------------------------------------ routes

    def answer(self, handler: Any, request: Received) -> None:
        handler.send_json(*self.route(request))

    def route(self, request: Received) -> Answer:
        method, body = request.method, request.body
        segments = [s for s in request.path.split("/") if s]
        if segments == ["health"]:
            return 200, {"status": "available"}
        if len(segments) == 2 and segments[0] == "tasks":
            task = self._poll(int(segments[1])) if segments[1].isdigit() else None
            if task is None:
                return _error(404, "task_not_found", f"Task `{segments[1]}` not found.")
            return 200, task
        if len(segments) < 3 or segments[0] != "indexes":
            return _error(404, "not_found", "no route")
        index, what, rest = segments[1], segments[2], segments[3:]
        with self._state:
            return self._index_route(request, method, body, index, what, rest)

    def _index_route(
        self, request: Received, method: str, body: Any, index: str, what: str, rest: list[str]
    ) -> Answer:
        documents = self.indexes.get(index)
        if what == "documents" and method == "POST" and not rest:
            primary = request.query.get("primaryKey", ["id"])[0]
            batch = body if isinstance(body, list) else [body]

            def add() -> dict | None:
                for document in batch:
                    if primary not in document:
                        return {
                            "message": f"Document doesn't have a `{primary}` attribute",
                            "code": "missing_document_id",
                            "type": "invalid_request",
                        }
                    if not _DOCUMENT_ID.fullmatch(str(document[primary])):
                        return {
                            "message": f"Document identifier `{document[primary]}` is invalid.",
                            "code": "invalid_document_id",
                            "type": "invalid_request",
                        }
                store = self.indexes.setdefault(index, {})
                for document in batch:
                    store[str(document[primary])] = document
                return None

            details = {"receivedDocuments": len(batch), "indexedDocuments": len(batch)}
            return 202, self.task(index, "documentAdditionOrUpdate", details, add)
        if what == "settings" and method == "PATCH":

            def configure() -> None:
                self.indexes.setdefault(index, {})
                self.settings.setdefault(index, {}).update(body)

            return 202, self.task(index, "settingsUpdate", body, configure)
        if documents is None:
            return _error(404, "index_not_found", f"Index `{index}` not found.")
        if what == "documents" and rest and method == "GET":
            found = documents.get(rest[0])
            if found is None:
                return _error(404, "document_not_found", f"Document `{rest[0]}` not found.")
            return 200, found
        if what == "documents" and rest and method == "DELETE":
            details = {"providedIds": 1, "deletedDocuments": int(rest[0] in documents)}
            return 202, self.task(
                index, "documentDeletion", details, lambda: documents.pop(rest[0], None) and None
            )
        if what == "documents" and not rest and method == "DELETE":
            return 202, self.task(
                index, "documentDeletion", {"deletedDocuments": len(documents)}, documents.clear
            )
        if what == "stats" and method == "GET":
            return 200, {
                "numberOfDocuments": len(documents),
                "isIndexing": bool(self._pending),
                "fieldDistribution": {},
            }
        if what == "search" and method == "POST":
            return 200, self.search(index, body)
        return _error(404, "not_found", "no route")

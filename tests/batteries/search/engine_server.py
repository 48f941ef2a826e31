"""A search server on 127.0.0.1 speaking the Meilisearch HTTP API the adapter uses.

No Meilisearch binary is obtainable here (not in Debian, PyPI or npm), so this server
implements the documented wire format of the calls the ``searchengine`` adapter makes
and records every request for the tests to assert:

* ``GET /health``; ``GET /tasks/{uid}`` (every task has already ``succeeded``);
* ``POST /indexes/{uid}/documents?primaryKey=id`` (add or replace; creates the index);
* ``GET|DELETE /indexes/{uid}/documents/{id}``, ``DELETE /indexes/{uid}/documents``;
* ``PATCH /indexes/{uid}/settings``; ``GET /indexes/{uid}/stats``;
* ``POST /indexes/{uid}/search`` with ``q`` (words and ``"phrases"``, all must match),
  ``filter`` (``a.b = v``, ``a.b IN [..]``, joined by ``AND``), ``offset``, ``limit``,
  highlight/crop tags and ``showRankingScore``.

Ranking is a small BM25 over the documents' ``fields`` (the server's own ranking rules
are its business; the tests check the adapter's requests and answers, and that a phrase
finds its paragraph). Errors use the documented body ``{"message", "code", "type",
"link"}``. A request without ``Authorization: Bearer <key>`` gets 401.
"""

from __future__ import annotations

import json
import math
import re
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

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
        assert kind == "name", tokens[i]
        op = tokens[i + 1]
        if op == ("op", "="):
            clauses.append((path, [tokens[i + 2][1]]))
            i += 3
        else:
            assert op == ("op", "IN") and tokens[i + 2] == ("op", "["), tokens[i : i + 3]
            values, i = [], i + 3
            while tokens[i] != ("op", "]"):
                if tokens[i][0] == "value":
                    values.append(tokens[i][1])
                i += 1
            clauses.append((path, values))
            i += 1
        if i < len(tokens):
            assert tokens[i] == ("op", "AND"), tokens[i]
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


class EngineServer:
    """The server, its stored indexes and the requests it received."""

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.indexes: dict[str, dict[str, dict]] = {}
        self.settings: dict[str, dict] = {}
        self.tasks: dict[int, dict] = {}
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"engine": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> EngineServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------ tasks

    def task(self, index: str, kind: str, details: dict) -> dict:
        with self._lock:
            uid = len(self.tasks)
            now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
            self.tasks[uid] = {
                "uid": uid,
                "indexUid": index,
                "status": "succeeded",
                "type": kind,
                "details": details,
                "error": None,
                "duration": "PT0.001S",
                "enqueuedAt": now,
                "startedAt": now,
                "finishedAt": now,
            }
        return {
            "taskUid": uid,
            "indexUid": index,
            "status": "enqueued",
            "type": kind,
            "enqueuedAt": now,
        }

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


class _Handler(BaseHTTPRequestHandler):
    engine: EngineServer

    def log_message(self, *args: Any) -> None:  # quiet
        return

    def _reply(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, code: str, message: str) -> None:
        self._reply(
            status,
            {
                "message": message,
                "code": code,
                "type": "invalid_request",
                "link": f"https://docs.meilisearch.com/errors#{code}",
            },
        )

    def _handle(self, method: str) -> None:
        engine = self.engine
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw.strip() else None
        engine.requests.append(
            {
                "method": method,
                "path": parts.path,
                "query": parse_qs(parts.query),
                "headers": dict(self.headers),
                "body": body,
            }
        )
        if self.headers.get("Authorization") != f"Bearer {engine.api_key}":
            return self._error(
                401, "missing_authorization_header", "The Authorization header is missing."
            )
        segments = [s for s in parts.path.split("/") if s]
        if segments == ["health"]:
            return self._reply(200, {"status": "available"})
        if len(segments) == 2 and segments[0] == "tasks":
            task = engine.tasks.get(int(segments[1]))
            return self._reply(200, task) if task else self._error(404, "task_not_found", "no task")
        if len(segments) < 3 or segments[0] != "indexes":
            return self._error(404, "not_found", "no route")
        index, what, rest = segments[1], segments[2], segments[3:]
        documents = engine.indexes.get(index)
        if what == "documents" and method == "POST" and not rest:
            primary = parse_qs(parts.query).get("primaryKey", ["id"])[0]
            store = engine.indexes.setdefault(index, {})
            for document in body:
                store[str(document[primary])] = document
            return self._reply(
                202,
                engine.task(
                    index,
                    "documentAdditionOrUpdate",
                    {"receivedDocuments": len(body), "indexedDocuments": len(body)},
                ),
            )
        if what == "settings" and method == "PATCH":
            engine.indexes.setdefault(index, {})
            engine.settings.setdefault(index, {}).update(body)
            return self._reply(202, engine.task(index, "settingsUpdate", body))
        if documents is None:
            return self._error(404, "index_not_found", f"Index `{index}` not found.")
        if what == "documents" and rest and method == "GET":
            found = documents.get(rest[0])
            return (
                self._reply(200, found)
                if found
                else self._error(404, "document_not_found", "Document not found.")
            )
        if what == "documents" and rest and method == "DELETE":
            gone = documents.pop(rest[0], None)
            return self._reply(
                202,
                engine.task(
                    index,
                    "documentDeletion",
                    {"providedIds": 1, "deletedDocuments": int(gone is not None)},
                ),
            )
        if what == "documents" and not rest and method == "DELETE":
            count = len(documents)
            documents.clear()
            return self._reply(
                202, engine.task(index, "documentDeletion", {"deletedDocuments": count})
            )
        if what == "stats" and method == "GET":
            return self._reply(
                200,
                {"numberOfDocuments": len(documents), "isIndexing": False, "fieldDistribution": {}},
            )
        if what == "search" and method == "POST":
            if body.get("filter") and "filters" not in engine.settings.get(index, {}).get(
                "filterableAttributes", []
            ):
                return self._error(400, "invalid_search_filter", "Attribute is not filterable.")
            return self._reply(200, engine.search(index, body))
        return self._error(404, "not_found", "no route")

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

"""A CDN provider API on 127.0.0.1 speaking its cache-purge wire format.

The tests (and ``bench/cdn.py``) start this one in a thread. It implements what the
``cdn_a`` adapter and the raw SDK send, as the provider's API reference documents it,
under the API root ``/client/v4``:

* ``POST /client/v4/zones/<zone_id>/purge_cache`` with ``Authorization: Bearer <token>``
  and a JSON body holding exactly one of ``files`` (URLs), ``tags``, ``hosts``,
  ``prefixes`` (lists of at most 30 non-empty strings) or ``purge_everything: true`` (any
  other value, or a body that is not ``application/json``, is a 400, as the API answers): 200
  ``{"success": true, "errors": [], "messages": [], "result": {"id": "<zone_id>"}}``;
* ``GET /client/v4/user/tokens/verify``: 200 ``{"success": true, ..., "result": {"id",
  "status": "active"}}``;
* a missing or wrong token: 403 ``{"success": false, "errors": [{"code": 10000,
  "message": "Authentication error"}], "messages": [], "result": null}``;
* an unknown zone: 404 with error code 7003 ("Could not route to ..."); a malformed body:
  400 with error code 1012 ("Request must contain one of ...").

``fail_next(status, count)`` answers the next requests with that status. Requests are
recorded (method, path, headers, decoded JSON body, answered status) unless
``record=False``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROOT = "/client/v4"
MAX_ITEMS = 30
_KINDS = ("files", "tags", "hosts", "prefixes", "purge_everything")


def envelope(result: Any = None, *, errors: list[dict[str, Any]] | None = None) -> dict:
    return {"success": not errors, "errors": errors or [], "messages": [], "result": result}


def _error(status: int) -> dict:
    code, message = {
        400: (
            1012,
            "Request must contain one of 'purge_everything', 'files', 'tags', "
            "'hosts' or 'prefixes'",
        ),
        403: (10000, "Authentication error"),
        404: (7003, "Could not route to /zones, perhaps your object identifier is invalid?"),
        429: (971, "Please wait and consider throttling your request speed"),
    }.get(status, (10001, "Internal error"))
    return envelope(errors=[{"code": code, "message": message}])


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int


@dataclass
class State:
    token: str
    zone_id: str
    requests: list[Received] = field(default_factory=list)
    #: Statuses for the next requests (0: answer normally).
    failures: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class PurgeServer:
    """Start with ``with PurgeServer(token, zone_id) as server:``; ``server.url`` is the root."""

    def __init__(self, token: str, zone_id: str, *, record: bool = True) -> None:
        self.state = State(token=token, zone_id=zone_id)
        state = self.state

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _answer(self, method: str, body: Any) -> tuple[int, dict]:
                with state.lock:
                    failure = state.failures.pop(0) if state.failures else None
                if failure:  # 0: a request let through before the failures
                    return failure, _error(failure)
                if self.headers.get("Authorization") != f"Bearer {state.token}":
                    return 403, _error(403)
                if method == "GET" and self.path == f"{ROOT}/user/tokens/verify":
                    return 200, envelope({"id": "tok-1", "status": "active"})
                prefix = f"{ROOT}/zones/"
                if method != "POST" or not self.path.startswith(prefix):
                    return 404, _error(404)
                zone, _, rest = self.path[len(prefix) :].partition("/")
                if rest != "purge_cache" or zone != state.zone_id:
                    return 404, _error(404)
                if not isinstance(body, dict) or len(body) != 1 or next(iter(body)) not in _KINDS:
                    return 400, _error(400)
                if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
                    return 400, _error(400)
                ((kind, items),) = body.items()
                if kind == "purge_everything":
                    if items is not True:  # the API takes only `true` here
                        return 400, _error(400)
                elif not (
                    isinstance(items, list)
                    and items
                    and len(items) <= MAX_ITEMS
                    and all(isinstance(item, str) and item for item in items)
                ):
                    return 400, _error(400)
                return 200, envelope({"id": zone})

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                status, answer = self._answer(method, body)
                if record:
                    with state.lock:
                        state.requests.append(
                            Received(method, self.path, dict(self.headers.items()), body, status)
                        )
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                self._handle("POST")

            def do_GET(self) -> None:
                self._handle("GET")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}{ROOT}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> PurgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def fail_next(self, status: int, count: int = 1, *, after: int = 0) -> None:
        """Answer ``count`` requests with ``status``, once ``after`` more were answered."""
        with self.state.lock:
            self.state.failures.extend([0] * after + [status] * count)

    @property
    def requests(self) -> list[Received]:
        with self.state.lock:
            return list(self.state.requests)

    def purged(self, kind: str) -> list[str]:
        """Every item of ``kind`` (``files``, ``tags``) in requests answered 200, in order."""
        return [
            item
            for r in self.requests
            if r.status == 200 and isinstance(r.body, dict)
            for item in r.body.get(kind, [])
        ]

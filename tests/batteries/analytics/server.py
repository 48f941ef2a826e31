"""A product-analytics ingestion server on 127.0.0.1 speaking the provider's batch wire format.

The tests (and ``bench/analytics.py``) start this one in a thread. It implements the
documented batch endpoint the ``analytics_b`` adapter and the raw SDK call use:

* ``POST /batch/`` with a JSON body ``{"api_key", "batch": [...], "sent_at", ...}``
  (optionally gzip-encoded): 200 ``{"status": 1}``;
* a wrong ``api_key``: 401 ``{"type": "authentication_error", "code":
  "invalid_api_key", "detail": "Project API key invalid. ...", "attr": null}``;
* a body without a ``batch`` list, or an item without ``event``: 400 ``{"type":
  "validation_error", "code": "invalid_payload", "detail": "...", "attr": null}``;
* anything else: 404.

``fail_next(status, count)`` answers the next requests with that status (503 with
``{"type": "server_error", ...}``) so tests can drive the failure paths. Requests are
recorded (method, path, headers, decoded body) unless ``record=False``.
"""

from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ERRORS = {
    400: ("validation_error", "invalid_payload", "Malformed request data"),
    401: (
        "authentication_error",
        "invalid_api_key",
        "Project API key invalid. You can find your project API key in your project settings.",
    ),
    503: ("server_error", "server_error", "Service unavailable"),
}


def _error(status: int, detail: str = "") -> dict[str, Any]:
    kind, code, text = _ERRORS.get(status, ("server_error", "error", "Error"))
    return {"type": kind, "code": code, "detail": detail or text, "attr": None}


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    #: The status the server answered.
    status: int


@dataclass
class State:
    api_key: str
    requests: list[Received] = field(default_factory=list)
    failures: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    arrived: threading.Condition = field(default_factory=threading.Condition)


class BatchServer:
    """Start with ``with BatchServer(api_key) as server:``; ``server.url`` is the endpoint."""

    def __init__(self, api_key: str, *, record: bool = True) -> None:
        self.state = State(api_key=api_key)
        state = self.state

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _answer(self, body: Any) -> tuple[int, Any]:
                with state.lock:
                    failure = state.failures.pop(0) if state.failures else None
                if failure is not None:
                    return failure, _error(failure)
                if self.path != "/batch/":
                    return 404, {"detail": "Not found"}
                if not isinstance(body, dict):
                    return 400, _error(400)
                if body.get("api_key") != state.api_key:
                    return 401, _error(401)
                batch = body.get("batch")
                if not isinstance(batch, list) or not all(
                    isinstance(item, dict) and item.get("event") for item in batch
                ):
                    return 400, _error(400, "Invalid payload: batch items need an event")
                return 200, {"status": 1}

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.headers.get("Content-Encoding") == "gzip":
                    raw = gzip.decompress(raw)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                status, answer = self._answer(body)
                if record:
                    with state.arrived:
                        state.requests.append(
                            Received("POST", self.path, dict(self.headers.items()), body, status)
                        )
                        state.arrived.notify_all()
                self._send(status, answer)

            def do_GET(self) -> None:
                if record:
                    with state.arrived:
                        state.requests.append(
                            Received("GET", self.path, dict(self.headers.items()), None, 404)
                        )
                        state.arrived.notify_all()
                self._send(404, {"detail": "Not found"})

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> BatchServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # ------------------------------------------------------------------ test helpers

    def fail_next(self, status: int, count: int = 1) -> None:
        """Answer the next ``count`` requests with ``status``."""
        with self.state.lock:
            self.state.failures.extend([status] * count)

    @property
    def requests(self) -> list[Received]:
        with self.state.arrived:
            return list(self.state.requests)

    def events(self) -> list[dict[str, Any]]:
        """Every batch item of the requests answered 200, in arrival order."""
        items: list[dict[str, Any]] = []
        for request in self.requests:
            if request.status == 200:
                items.extend(request.body["batch"])
        return items

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Wait until ``count`` requests arrived (bounded); return them."""
        with self.state.arrived:
            self.state.arrived.wait_for(lambda: len(self.state.requests) >= count, timeout)
            return list(self.state.requests)

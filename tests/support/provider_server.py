"""One base for the local stand-ins of provider APIs that cannot run on this machine.

Where no real product runs here (LLM APIs, Paddle, Twilio, ...), a provider adapter is
tested against a local HTTP server speaking the provider's documented wire format. Such a
server is only worth its name when it is **strict**: it refuses what the real API refuses
(content type, a body that is not a JSON object, required fields, auth header format), with
the provider's documented error body, so an adapter sending a malformed request fails its
test instead of passing against a lenient fake.

:class:`ProviderServer` holds the plumbing every stand-in shares: it binds port 0 on
127.0.0.1 (no probe-then-bind race), shuts down within one 50 ms poll, records every
request (:class:`Received`), serves queued failures (``failures``: ``(status, body)`` or
``(status, body, headers)``), and runs, in order,
:meth:`ProviderServer.authorized`, :meth:`ProviderServer.malformed` (the strictness hook)
and :meth:`ProviderServer.answer`.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: ``(status, JSON body)`` of an answer; a queued failure may add ``(..., headers)``.
Answer = tuple[int, Any]


@dataclass
class Received:
    """One request as the server saw it (``body`` is the decoded JSON, or ``None``)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw: bytes = field(repr=False, default=b"")

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class ProviderServer:
    """The base of a strict provider stand-in; subclasses say what the provider takes."""

    #: Path prefix the adapter's base URL needs (``/v1`` for Chat Completions).
    base_path = ""
    #: Content types a request body may have (empty: any, as for form-encoded APIs).
    content_types: tuple[str, ...] = ("application/json",)

    def __init__(self, key: str, *, tls: tuple[Path, Path] | None = None) -> None:
        self.key = key
        self.received: list[Received] = []
        self.failures: deque[tuple[Any, ...]] = deque()
        #: Seconds to wait before answering (time-out tests).
        self.delay = 0.0
        #: Send only this many events of a stream, then drop the connection mid-body.
        self.cut_after: int | None = None
        self.scheme = "https" if tls else "http"
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        if tls is not None:  # HTTPS with the given certificate (TLS verification tests)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{self.scheme}://{host}:{port}{self.base_path}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> ProviderServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ per provider

    def bad_request(self, message: str) -> Answer:
        """Return the provider's documented 400 body saying ``message``."""
        return 400, {"error": {"message": message}}

    def malformed(self, request: Received) -> Answer | None:
        """Return the provider's refusal of a request it would not take, or ``None``.

        The base refuses a body whose content type is not one of :attr:`content_types`
        and, for JSON APIs, a body that is not a JSON object; subclasses add the
        provider's required fields (calling this first).
        """
        if not self.content_types or not request.raw:
            return None
        if request.content_type not in self.content_types:
            return self.bad_request(f"unsupported content type {request.content_type!r}")
        if "application/json" in self.content_types and not isinstance(request.body, dict):
            return self.bad_request("the request body is not a JSON object")
        return None

    def authorized(self, headers: dict[str, str]) -> bool:
        raise NotImplementedError

    def unauthorized(self) -> Answer:
        raise NotImplementedError

    def answer(self, handler: Any, request: Received) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ plumbing

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms stall)

            def log_message(self, *args: Any) -> None:
                pass

            def send_json(
                self, status: int, body: Any, headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def send_events(self, events: list[str]) -> None:
                """Server-sent events, the body delimited by closing the connection."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                if server.cut_after is not None:  # promise more than is sent, then hang up
                    self.send_header("Content-Length", str(1 << 20))
                    events = events[: server.cut_after]
                self.end_headers()
                self.close_connection = True
                for event in events:
                    self.wfile.write(event.encode())
                    self.wfile.flush()

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                parts = urlsplit(self.path)
                request = Received(
                    method,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    raw,
                )
                with server._lock:
                    server.received.append(request)
                    failure = server.failures.popleft() if server.failures else None
                if not server.authorized(request.headers):
                    return self.send_json(*server.unauthorized())
                refusal = server.malformed(request)
                if refusal is not None:
                    return self.send_json(*refusal)
                if failure is not None:
                    return self.send_json(*failure)
                if server.delay:
                    time.sleep(server.delay)
                server.answer(self, request)

            def do_POST(self) -> None:
                self._serve("POST")

            def do_GET(self) -> None:
                self._serve("GET")

        return Handler

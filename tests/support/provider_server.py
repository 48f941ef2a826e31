"""One base for the local stand-ins of provider APIs that cannot run on this machine.

Where no real product runs here (LLM APIs, Paddle, Twilio, ...), a provider adapter is
tested against a local HTTP server speaking the provider's documented wire format. Such a
server is only worth its name when it is **strict**: it refuses what the real API refuses
(content type, a body that is not a JSON object, required fields, auth header format), with
the provider's documented error body, so an adapter sending a malformed request fails its
test instead of passing against a lenient fake.

:class:`ProviderServer` holds the plumbing every stand-in shares: it binds port 0 on
127.0.0.1 (no probe-then-bind race), shuts down within one 50 ms poll, records every
request (:class:`Received`, stamped with :attr:`ProviderServer.clock`), serves queued
failures (``failures``: ``(status, body)`` or ``(status, body, headers)``), refuses a body
over :attr:`ProviderServer.max_body` bytes with :meth:`ProviderServer.too_large`, and runs,
in order, :meth:`ProviderServer.authorized`, :meth:`ProviderServer.malformed` (the
strictness hook) and :meth:`ProviderServer.answer`. An answer body that is ``bytes`` goes
out as it is (an HTML error page, a PDF), with the content type its headers name.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import gzip
import json
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
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
    #: When the server received it, on the server's clock (rate-limit tests).
    at: float = 0.0
    #: The status the server answered (0 until it has answered).
    status: int = 0

    def header(self, name: str) -> str | None:
        """Return the header ``name`` (any case), or ``None``."""
        return self.headers.get(name.lower())

    def json(self) -> Any:
        """Return the body decoded as JSON (raises on a body that is not JSON)."""
        return json.loads(self.raw)

    def form(self) -> dict[str, str]:
        """Return a form-encoded body as a dict (the last value of a repeated field)."""
        return {k: v[-1] for k, v in parse_qs(self.raw.decode(), keep_blank_values=True).items()}

    def parts(self) -> list[tuple[str, str | None, bytes]]:
        """Return a ``multipart/form-data`` body as ``(field name, file name, payload)``s."""
        kind = self.headers.get("content-type", "")
        message = email.message_from_bytes(
            f"Content-Type: {kind}\r\n\r\n".encode() + self.raw, policy=email.policy.HTTP
        )
        if not message.is_multipart():
            return []
        return [
            (
                part.get_param("name", header="content-disposition") or "",
                part.get_filename(),
                part.get_payload(decode=True) or b"",
            )
            for part in message.iter_parts()
        ]

    @property
    def files(self) -> dict[str, bytes]:
        """The multipart body's ``files`` parts by file name (Gotenberg's upload field)."""
        return {name or "": data for field_, name, data in self.parts() if field_ == "files"}

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._open: set[Any] = set()
        self._open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """End every kept-alive connection: a stopped provider answers nothing more."""
        with self._open_lock:
            still_open = list(self._open)
        for request in still_open:
            with contextlib.suppress(OSError):  # the client closed it first
                request.shutdown(socket.SHUT_RDWR)


class ProviderServer:
    """The base of a strict provider stand-in; subclasses say what the provider takes."""

    #: Path prefix the adapter's base URL needs (``/v1`` for Chat Completions).
    base_path = ""
    #: Content types a request body may have (empty: any, as for form-encoded APIs).
    content_types: tuple[str, ...] = ("application/json",)
    #: The largest body the provider takes, in bytes (``None``: no limit).
    max_body: int | None = None

    def __init__(
        self,
        key: str,
        *,
        tls: tuple[Path, Path] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.clock = clock
        self.received: list[Received] = []
        #: Keep request records (a benchmark turns this off).
        self.record = True
        #: Notified after each answer (:meth:`wait_for` waits on it, no polling).
        self.answered = threading.Condition()
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
        self._server.drop_connections()

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ per provider

    def bad_request(self, message: str) -> Answer:
        """Return the provider's documented 400 body saying ``message``."""
        return 400, {"error": {"message": message}}

    def too_large(self, size: int) -> Answer:
        """Return the provider's refusal of a body of ``size`` bytes over :attr:`max_body`."""
        return 413, {"error": {"message": f"request body of {size} bytes is too large"}}

    def requests(self, method: str | None = None, path: str | None = None) -> list[Received]:
        """Return the requests received so far, of ``method`` and ``path`` when given."""
        return self._records(method, path)

    def _records(self, method: str | None = None, path: str | None = None) -> list[Received]:
        # What requests() returns; the base calls this one, as a subclass may redefine
        # ``requests`` (a property, a counter).
        with self._lock:
            return [
                r
                for r in self.received
                if (method is None or r.method == method) and (path is None or r.path == path)
            ]

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Wait (bounded) until ``count`` requests have been answered; return the records."""
        with self.answered:
            self.answered.wait_for(
                lambda: sum(1 for r in self._records() if r.status) >= count, timeout
            )
        return self._records()

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
                headers = dict(headers or {})
                if isinstance(body, bytes):  # sent as it is, typed by its headers
                    data = body
                    kind = headers.pop("Content-Type", "text/html; charset=utf-8")
                else:
                    data = json.dumps(body).encode()
                    kind = headers.pop("Content-Type", "application/json")
                if self.request_record is not None:
                    self.request_record.status = status
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def send_events(self, events: list[str]) -> None:
                """Server-sent events, the body delimited by closing the connection."""
                if self.request_record is not None:
                    self.request_record.status = 200
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

            request_record: Received | None = None

            def _serve(self, method: str) -> None:
                try:
                    self._answer(method)
                finally:
                    with server.answered:
                        server.answered.notify_all()

            def _answer(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if raw and self.headers.get("Content-Encoding", "").lower() == "gzip":
                    try:
                        raw = gzip.decompress(raw)
                    except OSError:
                        raw = b"\0"  # not gzip after all: no JSON either
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                parts = urlsplit(self.path)
                request = Received(
                    method,
                    parts.path,
                    parse_qs(parts.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    raw,
                    server.clock(),
                )
                self.request_record = request
                with server._lock:
                    if server.record:
                        server.received.append(request)
                    failure = server.failures.popleft() if server.failures else None
                if server.max_body is not None and len(raw) > server.max_body:
                    return self.send_json(*server.too_large(len(raw)))
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

            def do_PUT(self) -> None:
                self._serve("PUT")

            def do_PATCH(self) -> None:
                self._serve("PATCH")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        return Handler

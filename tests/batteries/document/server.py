"""A rendering service on 127.0.0.1 speaking Gotenberg's Chromium HTML route.

No rendering service runs on the machine, so the tests (and none of the benches) start
this one in a thread. It implements what the ``remote`` adapter sends, as Gotenberg
documents it:

* ``POST /forms/chromium/convert/html``, ``multipart/form-data`` whose ``files`` parts
  hold ``index.html`` and the assets: answers ``200`` with ``application/pdf``, the PDF
  rendered from ``index.html`` by WeasyPrint (a real PDF, so page count and text can be
  checked);
* ``GET /health``: ``200`` ``{"status": "up"}``.

Every request is recorded (method, path, headers, parts by file name) for assertions.
``status``, ``delay`` and ``body`` override the answer, to test errors, timeouts and
oversized answers.
"""

from __future__ import annotations

import email
import email.policy
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)


class RenderServer:
    """Start with ``with RenderServer() as server:``; ``server.url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.status = 200
        self.delay = 0.0
        self.body: bytes | None = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                owner.received.append(Received("GET", self.path, dict(self.headers)))
                if self.path == "/health":
                    self._send(200, json.dumps({"status": "up"}).encode(), "application/json")
                else:
                    self._send(404, b"{}", "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                files = _parts(self.headers.get("Content-Type", ""), raw)
                owner.received.append(Received("POST", self.path, dict(self.headers), files))
                if owner.delay:
                    time.sleep(owner.delay)
                if self.path != "/forms/chromium/convert/html" or "index.html" not in files:
                    self._send(400, b"bad request", "text/plain")
                    return
                if owner.status != 200 or owner.body is not None:
                    self._send(owner.status, owner.body or b"error", "application/pdf")
                    return
                import weasyprint

                pdf = weasyprint.HTML(string=files["index.html"].decode("utf-8")).write_pdf()
                self._send(200, pdf, "application/pdf")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> RenderServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _parts(content_type: str, body: bytes) -> dict[str, bytes]:
    """Return the multipart body's ``files`` parts by file name."""
    message = email.message_from_bytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body, policy=email.policy.HTTP
    )
    found: dict[str, bytes] = {}
    if not message.is_multipart():
        return found
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "files":
            found[part.get_filename() or ""] = part.get_payload(decode=True) or b""
    return found

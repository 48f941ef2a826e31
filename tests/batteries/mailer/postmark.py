"""A local HTTP server speaking Postmark's documented ``POST /email`` wire format.

django-anymail's Postmark backend is pointed at it (``ANYMAIL["POSTMARK_API_URL"]``); it
checks the ``X-Postmark-Server-Token`` header and answers as Postmark does
(``{"To", "SubmittedAt", "MessageID", "ErrorCode": 0, "Message": "OK"}``, or
``ErrorCode`` 10 with HTTP 401 for a bad token), keeping every accepted payload.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.ports import free_port


class PostmarkServer:
    def __init__(self, token: str) -> None:
        self.token = token
        self.received: list[dict[str, Any]] = []
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                outer.requests += 1
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/email":
                    return self._answer(404, {"ErrorCode": 404, "Message": "not found"})
                if self.headers.get("X-Postmark-Server-Token") != outer.token:
                    return self._answer(401, {"ErrorCode": 10, "Message": "Bad or missing token"})
                payload = json.loads(body)
                outer.received.append(payload)
                self._answer(
                    200,
                    {
                        "To": payload.get("To", ""),
                        "SubmittedAt": "2026-11-24T19:00:00Z",
                        "MessageID": str(uuid.uuid4()),
                        "ErrorCode": 0,
                        "Message": "OK",
                    },
                )

            def _answer(self, status: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.port = free_port()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> PostmarkServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

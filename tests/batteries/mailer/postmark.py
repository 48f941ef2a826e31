"""A local HTTP server speaking Postmark's documented ``POST /email`` wire format.

django-anymail's Postmark backend is pointed at it (``ANYMAIL["POSTMARK_API_URL"]``); it
checks the ``X-Postmark-Server-Token`` header and answers as Postmark does
(``{"To", "SubmittedAt", "MessageID", "ErrorCode": 0, "Message": "OK"}``, or
``ErrorCode`` 10 with HTTP 401 for a bad token), keeping every accepted payload.

It is strict, as Postmark is: a body that is not JSON (``ErrorCode`` 402), a request that
is not ``application/json``, or a message without ``From``, ``To`` or a body
(``HtmlBody``/``TextBody``), or with an attachment lacking ``Name``/``Content``/
``ContentType``, answers 422 with ``ErrorCode`` 300, so a backend that sends a malformed
message fails its test.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
                try:
                    payload = json.loads(body)
                except ValueError:
                    return self._answer(422, {"ErrorCode": 402, "Message": "Invalid JSON"})
                problem = outer.invalid(payload, self.headers.get("Content-Type", ""))
                if problem:
                    return self._answer(422, {"ErrorCode": 300, "Message": problem})
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

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @staticmethod
    def invalid(payload: Any, content_type: str) -> str:
        """Return why Postmark would refuse ``payload`` ("" when it would accept it)."""
        if content_type.split(";")[0].strip() != "application/json":
            return "Invalid email request: the body must be application/json"
        if not isinstance(payload, dict):
            return "Invalid email request: expected a JSON object"
        for required in ("From", "To"):
            if not payload.get(required):
                return f"Invalid email request: {required} is required"
        if not (payload.get("HtmlBody") or payload.get("TextBody")):
            return "Invalid email request: provide either email TextBody or HtmlBody or both"
        for attachment in payload.get("Attachments") or []:
            if not all(attachment.get(k) for k in ("Name", "Content", "ContentType")):
                return "Invalid email request: attachments need Name, Content and ContentType"
        return ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> PostmarkServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

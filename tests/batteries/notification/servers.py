"""Local stand-ins for the two providers, on 127.0.0.1, speaking their documented wire formats.

:class:`FakeSMSProvider`, the text-message provider's 2010-04-01 REST API:

* ``POST /2010-04-01/Accounts/<AccountSid>/Messages.json``: HTTP Basic authentication
  (``AccountSid:AuthToken``), a form body ``To``, ``From``, ``Body``; ``201`` with the
  message resource (``sid`` ``SM`` + 32 hex, ``status`` ``queued``, ...). A wrong
  credential answers ``401`` ``{"code": 20003, "message": "Authenticate", ...}``; a ``To``
  in :attr:`refuse` answers ``400`` ``{"code": 21211, "message": "The 'To' number <n> is
  not a valid phone number.", ...}`` (quoting the number, as the provider does). As the
  provider does, a body that is not form-encoded, or without ``To`` (21604), ``From``
  (21603) or ``Body`` (21602), or a ``Body`` over 1600 characters (21617), is a ``400``.
* ``GET /2010-04-01/Accounts/<AccountSid>.json``: the account resource.

:class:`FakePushService`, the push service's HTTP v1 API and its OAuth 2.0 token URI:

* ``POST /token``: the JWT-bearer grant. The ``assertion`` must be an RS256 JWT signed by
  the service account's key (verified with its public half), ``kid`` the key id, ``iss``
  the client email, ``aud`` this URL, the messaging scope; answers ``{"access_token",
  "expires_in", "token_type": "Bearer"}``, or ``400 {"error": "invalid_grant"}``.
* ``POST /v1/projects/<project>/messages:send``: ``Authorization: Bearer <issued token>``
  (``401 UNAUTHENTICATED`` otherwise), a JSON ``{"message": {...}}`` with exactly one of
  ``token``/``topic``; answers ``{"name": "projects/<p>/messages/<id>"}``, or ``404`` with
  an ``FcmError`` ``UNREGISTERED`` for a token in :attr:`unregistered`.

Both record every request (:class:`Seen`: method, path, headers, raw body) and can be
forced to answer a status (:attr:`force`).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

ACCOUNT_SID = "AC" + "5ef8732a3c49700934481addd5ce1659"
AUTH_TOKEN = "tw-auth-Zq81-secret-never-shown"
FROM_NUMBER = "+15005550006"
PROJECT = "toolkit-push-tests"
EMAIL = "push@toolkit-push-tests.iam.gserviceaccount.com"
KEY_ID = "push-key-1"
SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def form(self) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(self.body.decode(), keep_blank_values=True)

    def json(self) -> Any:
        return json.loads(self.body)


class _Server:
    """A threaded HTTP/1.1 server (keep-alive) that records requests and dispatches them."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.force: tuple[int, Any] | None = None
        self.delay = 0.0  # seconds to stall before answering (timeouts)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._running = False

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> _Server:
        self._thread.start()
        self._running = True
        return self

    def stop(self) -> None:
        if self._running:
            self._server.shutdown()
            self._server.server_close()
            self._running = False

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def paths(self, method: str = "") -> list[str]:
        with self._lock:
            return [s.path for s in self.seen if not method or s.method == method]

    def handle(self, seen: Seen) -> tuple[int, Any]:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # keep-alive without 40 ms delayed-ACK stalls

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                seen = Seen(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length),
                )
                with fake._lock:
                    fake.seen.append(seen)
                if fake.delay:
                    time.sleep(fake.delay)
                status, body = fake.force if fake.force else fake.handle(seen)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

        return Handler


class FakeSMSProvider(_Server):
    """The text-message provider's Messages API (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse: set[str] = set()
        self._count = 0

    def _authorized(self, seen: Seen) -> bool:
        expected = base64.b64encode(f"{ACCOUNT_SID}:{AUTH_TOKEN}".encode()).decode()
        return seen.headers.get("authorization") == f"Basic {expected}"

    def handle(self, seen: Seen) -> tuple[int, Any]:
        base = f"/2010-04-01/Accounts/{ACCOUNT_SID}"
        if not self._authorized(seen):
            return 401, {
                "code": 20003,
                "message": "Authenticate",
                "more_info": "https://www.twilio.com/docs/errors/20003",
                "status": 401,
            }
        if seen.method == "GET" and seen.path == f"{base}.json":
            return 200, {"sid": ACCOUNT_SID, "status": "active", "friendly_name": "tests"}
        if seen.method != "POST" or seen.path != f"{base}/Messages.json":
            return 404, {"code": 20404, "message": "The requested resource was not found"}
        if (
            seen.headers.get("content-type", "").split(";")[0]
            != "application/x-www-form-urlencoded"
        ):
            return 400, _twilio_error(20001, "Invalid content type")
        form = {k: v[0] for k, v in seen.form().items()}
        to = form.get("To", "")
        # What the real API refuses, with its documented error codes, so an adapter that
        # leaves a field out fails its test.
        if not to:
            return 400, _twilio_error(21604, "A 'To' phone number is required.")
        if not form.get("From") and not form.get("MessagingServiceSid"):
            return 400, _twilio_error(21603, "A 'From' phone number is required.")
        if not form.get("Body") and not form.get("MediaUrl") and not form.get("ContentSid"):
            return 400, _twilio_error(21602, "Message body is required.")
        if len(form.get("Body", "")) > 1600:
            return 400, _twilio_error(
                21617, "The concatenated message body exceeds the 1600 character limit."
            )
        if to in self.refuse:
            return 400, {
                "code": 21211,
                "message": f"The 'To' number {to} is not a valid phone number.",
                "more_info": "https://www.twilio.com/docs/errors/21211",
                "status": 400,
            }
        with self._lock:
            self._count += 1
            sid = f"SM{self._count:032x}"
        return 201, {
            "account_sid": ACCOUNT_SID,
            "api_version": "2010-04-01",
            "body": form.get("Body", ""),
            "date_created": "Thu, 24 Aug 2023 05:01:45 +0000",
            "date_sent": None,
            "date_updated": "Thu, 24 Aug 2023 05:01:45 +0000",
            "direction": "outbound-api",
            "error_code": None,
            "error_message": None,
            "from": form.get("From"),
            "messaging_service_sid": None,
            "num_media": "0",
            "num_segments": "1",
            "price": None,
            "price_unit": None,
            "sid": sid,
            "status": "queued",
            "subresource_uris": {"media": f"{base}/Messages/{sid}/Media.json"},
            "to": to,
            "uri": f"{base}/Messages/{sid}.json",
        }


def _twilio_error(code: int, message: str) -> dict[str, Any]:
    return {
        "code": code,
        "message": message,
        "more_info": f"https://www.twilio.com/docs/errors/{code}",
        "status": 400,
    }


class FakePushService(_Server):
    """The push service's token URI and ``messages:send`` (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.tokens: set[str] = set()
        self.issued: list[str] = []  # every token ever issued (revoked ones too)
        self.unregistered: set[str] = set()
        self.expires_in = 3599
        self._count = 0

    def key_pem(self, key: Any = None) -> str:
        return (
            (key or self.key)
            .private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            .decode()
        )

    def write_account(
        self, directory: Path, *, token_uri: str | None = None, key: Any = None
    ) -> Path:
        """Write a service-account key file (mode 0600) and return its path."""
        path = directory / "push-service-account.json"
        path.write_text(
            json.dumps(
                {
                    "type": "service_account",
                    "project_id": PROJECT,
                    "private_key_id": KEY_ID,
                    "private_key": self.key_pem(key),
                    "client_email": EMAIL,
                    "client_id": "1234567890",
                    "token_uri": token_uri or f"{self.url}/token",
                }
            ),
            encoding="utf-8",
        )
        os.chmod(path, 0o600)
        return path

    def handle(self, seen: Seen) -> tuple[int, Any]:
        if seen.method == "POST" and seen.path == "/token":
            return self._token(seen)
        if seen.method == "POST" and seen.path == f"/v1/projects/{PROJECT}/messages:send":
            return self._send(seen)
        return 404, {"error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}}

    def _token(self, seen: Seen) -> tuple[int, Any]:
        form = seen.form()
        if seen.headers.get("content-type") != "application/x-www-form-urlencoded":
            return 400, {"error": "invalid_request"}
        if form.get("grant_type") != [GRANT]:
            return 400, {"error": "unsupported_grant_type"}
        try:
            assertion = form["assertion"][0]
            header = jwt.get_unverified_header(assertion)
            claims = jwt.decode(
                assertion,
                self.key.public_key(),
                algorithms=["RS256"],
                audience=f"{self.url}/token",
                issuer=EMAIL,
                options={"require": ["iat", "exp", "iss", "aud"]},
            )
        except (KeyError, jwt.PyJWTError):
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        if header.get("kid") != KEY_ID or claims.get("scope") != SCOPE:
            return 400, {"error": "invalid_scope"}
        if claims["exp"] - claims["iat"] > 3600:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT lifetime."}
        token = "ya29.c." + secrets.token_urlsafe(32)
        with self._lock:
            self.tokens.add(token)
            self.issued.append(token)
        return 200, {"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"}

    def _send(self, seen: Seen) -> tuple[int, Any]:
        auth = seen.headers.get("authorization") or ""
        if not auth.startswith("Bearer ") or auth[7:] not in self.tokens:
            return 401, {
                "error": {
                    "code": 401,
                    "message": "Request had invalid authentication credentials.",
                    "status": "UNAUTHENTICATED",
                }
            }
        try:
            message = seen.json()["message"]
        except (ValueError, KeyError, TypeError):
            return 400, _fcm_error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")
        targets = [k for k in ("token", "topic", "condition") if k in message]
        if len(targets) != 1 or seen.headers.get("content-type") != "application/json":
            return 400, _fcm_error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")
        if message.get("token") in self.unregistered:
            return 404, _fcm_error(404, "NOT_FOUND", "UNREGISTERED")
        with self._lock:
            self._count += 1
            number = self._count
        return 200, {"name": f"projects/{PROJECT}/messages/0:{number}%31bd1c9631bd1c96"}

    def revoke_all(self) -> None:
        with self._lock:
            self.tokens.clear()


def _fcm_error(code: int, status: str, error_code: str) -> dict[str, Any]:
    return {
        "error": {
            "code": code,
            "message": "Requested entity was not found."
            if code == 404
            else "The registration token is not a valid FCM registration token",
            "status": status,
            "details": [
                {
                    "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                    "errorCode": error_code,
                }
            ],
        }
    }

"""A strict Firebase Remote Config stand-in: its OAuth token grant and v1 REST API.

No Firebase runs on this machine, so the flag ``remotecfg`` adapter is tested against
this server, which refuses what the real service refuses (documented at
firebase.google.com/docs/reference/remote-config/rest and Google's OAuth 2.0 service
account flow), with Google's error bodies, so an adapter sending a malformed request
fails its test:

* ``POST /token`` (the service account's ``token_uri``): a form-encoded body
  (``400 invalid_request`` otherwise) with ``grant_type=urn:ietf:params:oauth:grant-type:
  jwt-bearer`` (``400 unsupported_grant_type``) and an ``assertion`` that is an RS256 JWT
  signed by the account's key, its ``kid`` the key's id, ``iss`` the client email,
  ``aud`` the token URI, ``exp`` at most an hour after ``iat`` (``400 invalid_grant``),
  ``scope`` the Remote Config scope (``400 invalid_scope``); answers ``{"access_token",
  "expires_in", "token_type": "Bearer"}``. Errors are ``{"error", "error_description"}``.
* The API (``/v1/projects/<project>/...``) takes ``Authorization: Bearer <token issued
  here>`` (``401 UNAUTHENTICATED``); another project is ``404 NOT_FOUND``; a body on a
  GET or an unknown query parameter is ``400 INVALID_ARGUMENT``. Errors are Google's
  ``{"error": {"code", "message", "status"}}``.
* ``GET .../namespaces/firebase-server/serverRemoteConfig`` (what the server SDKs and the
  adapter read) and ``GET .../remoteConfig`` answer the template with an ``ETag``
  (``etag-<project number>-<version>``).
* ``PUT .../remoteConfig`` (publishing) needs ``Content-Type: application/json`` with a
  JSON object and ``If-Match``: the current ETag, or ``*`` to force. A missing or stale
  ``If-Match`` is ``412 FAILED_PRECONDITION`` (VERSION_MISMATCH); a success bumps the
  version and answers the new ETag.

Tests change :attr:`template`, read :attr:`requests` (a count per path) and
:attr:`tokens` (issued and still valid), force :attr:`status` on the template reads, and
:meth:`stop` the server to simulate an outage (stopping twice is harmless).
"""

from __future__ import annotations

import json
import os
import secrets
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.provider_server import Answer, ProviderServer, Received

__all__ = ["EMAIL", "GRANT", "KEY_ID", "PROJECT", "SCOPE", "RemoteConfigServer"]

SCOPE = "https://www.googleapis.com/auth/firebase.remoteconfig"
GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
PROJECT = "toolkit-tests"
PROJECT_NUMBER = "428163545"
EMAIL = "flags@toolkit-tests.iam.gserviceaccount.com"
KEY_ID = "key-1"
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    412: "FAILED_PRECONDITION",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def google_error(status: int, message: str) -> Answer:
    """Return Google's error body for ``status`` (``{"error": {code, message, status}}``)."""
    return status, {"error": {"code": status, "message": message, "status": _STATUS[status]}}


def _oauth_error(error: str, description: str) -> Answer:
    return 400, {"error": error, "error_description": description}


class RemoteConfigServer(ProviderServer):
    """The token endpoint and the Remote Config API of one project, on 127.0.0.1."""

    content_types = ()  # per route: see :meth:`malformed`

    def __init__(self, template: dict[str, Any] | None = None) -> None:
        super().__init__("")
        #: The service account's key (the base's ``key``, an API key, is unused here).
        self.private_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key_pem = self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        self.template: dict[str, Any] = template or {"parameters": {}, "conditions": []}
        #: Access tokens issued and still valid (clear it to expire them all).
        self.tokens: set[str] = set()
        #: A status every template read is answered with (an outage, a server error).
        self.status: int | None = None
        self._running = False

    # ------------------------------------------------------------------ test API

    @property
    def requests(self) -> Counter[str]:  # type: ignore[override]
        """How many requests reached each path."""
        return Counter(record.path for record in self._records())

    @property
    def etag(self) -> str:
        """The current template's ETag."""
        version = (self.template.get("version") or {}).get("versionNumber", "1")
        return f"etag-{PROJECT_NUMBER}-{version}"

    def start(self) -> RemoteConfigServer:
        super().start()
        self._running = True
        return self

    def stop(self) -> None:
        if self._running:
            super().stop()
            self._running = False

    def issue(self) -> str:
        """Return a valid access token without the grant (for raw API requests)."""
        token = "ya29." + secrets.token_urlsafe(24)
        self.tokens.add(token)
        return token

    def write_account(self, directory: Path, *, token_uri: str | None = None) -> Path:
        """Write the service-account key file (mode 0600) and return its path."""
        path = directory / "service-account.json"
        path.write_text(
            json.dumps(
                {
                    "type": "service_account",
                    "project_id": PROJECT,
                    "private_key_id": KEY_ID,
                    "private_key": self.key_pem,
                    "client_email": EMAIL,
                    "token_uri": token_uri or f"{self.url}/token",
                }
            ),
            encoding="utf-8",
        )
        os.chmod(path, 0o600)
        return path

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        # One request per connection (HTTP/1.0): a kept-alive connection would outlive
        # stop(), and an outage test would still be answered on it.
        class OneShot(super()._handler()):  # type: ignore[misc]
            protocol_version = "HTTP/1.0"

        return OneShot

    # ------------------------------------------------------------------ strictness

    def authorized(self, headers: dict[str, str]) -> bool:
        return True  # per route (the token endpoint takes none): see :meth:`malformed`

    def malformed(self, request: Received) -> Answer | None:
        if request.path == "/token":
            return self._token_refusal(request)
        scheme, _, token = (request.header("authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or token not in self.tokens:
            return google_error(
                401,
                "Request is missing required authentication credential. Expected OAuth 2 "
                "access token.",
            )
        if not request.path.startswith(f"/v1/projects/{PROJECT}/"):
            return google_error(404, "Requested entity was not found.")
        if request.method == "GET" and request.raw:
            return google_error(400, "A GET request carries no body.")
        unknown = set(request.query) - {"validateOnly"}
        if unknown:
            return google_error(400, f"Invalid JSON payload received. Unknown name {unknown}")
        if request.method == "PUT":
            if request.content_type != "application/json" or not isinstance(request.body, dict):
                return google_error(400, "The body must be a JSON RemoteConfig object.")
            if_match = request.header("if-match")
            if if_match is None or if_match not in ("*", self.etag):
                return google_error(
                    412, "VERSION_MISMATCH: If-Match is missing or is not the current ETag."
                )
        return None

    def _token_refusal(self, request: Received) -> Answer | None:
        if request.method != "POST":
            return _oauth_error("invalid_request", "The token endpoint takes POST.")
        if request.content_type != "application/x-www-form-urlencoded":
            return _oauth_error("invalid_request", "The body must be form-encoded.")
        form = parse_qs(request.raw.decode("utf-8", "replace"))
        if form.get("grant_type") != [GRANT]:
            return _oauth_error("unsupported_grant_type", "Invalid grant_type.")
        try:
            assertion = form["assertion"][0]
            if jwt.get_unverified_header(assertion).get("kid") != KEY_ID:
                return _oauth_error("invalid_grant", "Invalid JWT Signature.")
            claims = jwt.decode(
                assertion,
                self.private_key.public_key(),
                algorithms=["RS256"],
                audience=f"{self.url}/token",
                issuer=EMAIL,
                options={"require": ["exp", "iat", "aud", "iss"]},
            )
        except (KeyError, jwt.PyJWTError):
            return _oauth_error("invalid_grant", "Invalid JWT Signature.")
        if not 0 < int(claims["exp"]) - int(claims["iat"]) <= 3600:
            return _oauth_error(
                "invalid_grant",
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a "
                "reasonable timeframe.",
            )
        if claims.get("scope") != SCOPE:
            return _oauth_error("invalid_scope", "Invalid OAuth scope or ID token audience.")
        return None

    # ------------------------------------------------------------------ answers

    def answer(self, handler: Any, request: Received) -> None:
        handler.send_json(*self._route(request))

    def _route(self, request: Received) -> tuple[Any, ...]:
        if request.path == "/token":
            return 200, {"access_token": self.issue(), "expires_in": 3599, "token_type": "Bearer"}
        base = f"/v1/projects/{PROJECT}"
        server = f"{base}/namespaces/firebase-server/serverRemoteConfig"
        if (request.method, request.path) in (("GET", server), ("GET", f"{base}/remoteConfig")):
            if self.status is not None:
                return google_error(self.status, "The service is unavailable.")
            return 200, self.template, {"ETag": self.etag}
        if (request.method, request.path) == ("PUT", f"{base}/remoteConfig"):
            version = int((self.template.get("version") or {}).get("versionNumber", "1"))
            if request.query.get("validateOnly") != ["true"]:
                self.template = {**request.body, "version": {"versionNumber": str(version + 1)}}
            return 200, self.template, {"ETag": self.etag}
        return google_error(404, "Requested entity was not found.")

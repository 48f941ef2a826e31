"""A remote configuration service on 127.0.0.1 speaking its documented REST wire format.

* ``POST /token``: the OAuth 2.0 JWT-bearer grant of a service account. The form's
  ``assertion`` must be an RS256 JWT signed by the account's key (checked against the
  public half), with ``iss`` the client email, ``aud`` this URL and the Remote Config
  scope; the answer is ``{"access_token", "expires_in", "token_type": "Bearer"}``.
* ``GET /v1/projects/<project>/namespaces/firebase-server/serverRemoteConfig`` with
  ``Authorization: Bearer <issued token>``: the server template (``parameters``,
  ``conditions``, ``version``) with an ``ETag`` header; 401 without a valid token, 404 for
  another project.

Tests change :attr:`template`, count requests per path, and :meth:`stop` the server to
simulate an outage.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

SCOPE = "https://www.googleapis.com/auth/firebase.remoteconfig"
PROJECT = "toolkit-tests"
EMAIL = "flags@toolkit-tests.iam.gserviceaccount.com"


class FakeRemoteConfig:
    """Token endpoint and server-template endpoint on an ephemeral port."""

    def __init__(self, template: dict[str, Any] | None = None) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key_pem = self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        self.template: dict[str, Any] = template or {"parameters": {}, "conditions": []}
        self.requests: Counter[str] = Counter()
        self.tokens: set[str] = set()
        self.status: int | None = None  # force this status on the template endpoint
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._running = False

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()
        self._running = True

    def stop(self) -> None:
        if self._running:
            self._server.shutdown()
            self._server.server_close()
            self._running = False

    def write_account(self, directory: Path, *, token_uri: str | None = None) -> Path:
        """Write the service-account key file (mode 0600) and return its path."""
        path = directory / "service-account.json"
        path.write_text(
            json.dumps(
                {
                    "type": "service_account",
                    "project_id": PROJECT,
                    "private_key_id": "key-1",
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
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                fake.requests[self.path] += 1
                if self.path != "/token":
                    return self._send(404, {"error": "not_found"})
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
                    return self._send(400, {"error": "unsupported_grant_type"})
                try:
                    claims = jwt.decode(
                        form["assertion"][0],
                        fake.key.public_key(),
                        algorithms=["RS256"],
                        audience=f"{fake.url}/token",
                        issuer=EMAIL,
                    )
                except (KeyError, jwt.PyJWTError):
                    return self._send(400, {"error": "invalid_grant"})
                if claims.get("scope") != SCOPE:
                    return self._send(400, {"error": "invalid_scope"})
                token = "ya29." + secrets.token_urlsafe(24)
                fake.tokens.add(token)
                return self._send(
                    200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}
                )

            def do_GET(self) -> None:
                fake.requests[self.path] += 1
                expected = f"/v1/projects/{PROJECT}/namespaces/firebase-server/serverRemoteConfig"
                if self.path != expected:
                    return self._send(404, {"error": {"code": 404, "status": "NOT_FOUND"}})
                auth = self.headers.get("Authorization") or ""
                if not auth.startswith("Bearer ") or auth[7:] not in fake.tokens:
                    return self._send(401, {"error": {"code": 401, "status": "UNAUTHENTICATED"}})
                if fake.status is not None:
                    return self._send(fake.status, {"error": {"code": fake.status}})
                version = fake.template.get("version", {}).get("versionNumber", "1")
                return self._send(200, fake.template, {"ETag": f"etag-{version}"})

        return Handler


# ---------------------------------------------------------------------- templates


def template_of(flags: dict[str, Any], version: str = "1") -> dict[str, Any]:
    """Translate the contract's flag table into a server template with the same meaning.

    Each flag is a value or ``{"value", "enabled", "rollout", "tenants"}`` as in the
    static file; tenant conditions come before rollout conditions, as precedence needs.
    """
    parameters: dict[str, Any] = {}
    conditions: list[dict[str, Any]] = []
    rollouts: list[dict[str, Any]] = []
    for name, spec in flags.items():
        if not isinstance(spec, dict):
            spec = {"value": spec}
        value = spec.get("value", True)
        kind = (
            "BOOLEAN"
            if isinstance(value, bool)
            else "NUMBER"
            if isinstance(value, (int, float))
            else "STRING"
        )
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        off = "false" if kind == "BOOLEAN" else None
        parameter: dict[str, Any] = {"valueType": kind, "conditionalValues": {}}
        enabled = spec.get("enabled", True)
        rollout = spec.get("rollout")
        if not enabled or rollout is not None:
            parameter["defaultValue"] = (
                {"value": off} if off is not None else {"useInAppDefault": True}
            )
        else:
            parameter["defaultValue"] = {"value": text}
        if enabled and rollout is not None:
            cname = f"rollout_{name}"
            upper = round(rollout * 1_000_000) - 1
            rollouts.append(
                {
                    "name": cname,
                    "condition": {
                        "orCondition": {
                            "conditions": [
                                {
                                    "andCondition": {
                                        "conditions": [
                                            {
                                                "percent": {
                                                    "percentOperator": "BETWEEN",
                                                    "seed": spec.get("seed", name),
                                                    "microPercentRange": {
                                                        "microPercentLowerBound": -1,
                                                        "microPercentUpperBound": upper,
                                                    },
                                                }
                                            }
                                        ]
                                    }
                                }
                            ]
                        }
                    },
                }
            )
            parameter["conditionalValues"][cname] = {"value": text}
        for tenant, override in (spec.get("tenants") or {}).items():
            cname = f"tenant_{name}_{tenant}"
            conditions.append(
                {
                    "name": cname,
                    "condition": {
                        "customSignal": {
                            "customSignalOperator": "STRING_EXACTLY_MATCHES",
                            "customSignalKey": "tenant",
                            "targetCustomSignalValues": [tenant],
                        }
                    },
                }
            )
            if override is True:
                parameter["conditionalValues"][cname] = {"value": text}
            elif override is False:
                parameter["conditionalValues"][cname] = (
                    {"value": off} if off is not None else {"useInAppDefault": True}
                )
            else:
                parameter["conditionalValues"][cname] = {"value": str(override["value"])}
        parameters[name] = parameter
    return {
        "parameters": parameters,
        "conditions": conditions + rollouts,
        "version": {"versionNumber": version},
    }

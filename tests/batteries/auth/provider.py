"""A tiny OpenID provider on 127.0.0.1 that speaks the real wire format.

It serves the discovery document, a JWKS (an RSA and an EC P-256 key generated with
``cryptography``) and a token endpoint that signs ID tokens: POST a JSON object with
``sub`` and optionally ``alg`` (``RS256``/``ES256``), ``aud``, ``ttl``, ``kid`` and extra
claims; it answers ``{"id_token": ..., "token_type": "Bearer"}``. Tests can rotate keys,
change the discovery document and count requests per path.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

CLIENT_ID = "toolkit-tests"


class FakeProvider:
    """Discovery, JWKS and a token endpoint on an ephemeral 127.0.0.1 port."""

    def __init__(self) -> None:
        self.rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec_key = ec.generate_private_key(ec.SECP256R1())
        #: kid -> (algorithm, private key); the JWKS publishes the public halves.
        self.keys: dict[str, tuple[str, Any]] = {
            "rsa-1": ("RS256", self.rsa_key),
            "ec-1": ("ES256", self.ec_key),
        }
        self.requests: Counter[str] = Counter()
        self.discovery_overrides: dict[str, Any] = {}
        #: When set, ``/jwks`` waits for this event (at most 10 s) before answering: a
        #: slow provider, for the tests of what other verifications do meanwhile.
        self.jwks_gate: threading.Event | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.01,), daemon=True
        )

    @property
    def issuer(self) -> str:
        """Return the provider's issuer URL (http, loopback)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> None:
        """Start serving in a daemon thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()

    # ------------------------------------------------------------------ documents

    def discovery(self) -> dict[str, Any]:
        """Return the discovery document (with any test overrides applied)."""
        document = {
            "issuer": self.issuer,
            "jwks_uri": f"{self.issuer}/jwks",
            "token_endpoint": f"{self.issuer}/token",
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
            "subject_types_supported": ["public"],
            "response_types_supported": ["id_token"],
        }
        document.update(self.discovery_overrides)
        return document

    def jwks(self) -> dict[str, Any]:
        """Return the public keys as a JWKS."""
        keys = []
        for kid, (alg, private) in self.keys.items():
            exporter = RSAAlgorithm if alg == "RS256" else ECAlgorithm
            jwk = exporter.to_jwk(private.public_key(), as_dict=True)
            jwk.update({"kid": kid, "use": "sig", "alg": alg})
            keys.append(jwk)
        return {"keys": keys}

    def sign(self, claims: dict[str, Any], kid: str = "rsa-1") -> str:
        """Sign ``claims`` with the key ``kid`` (the token endpoint's signer)."""
        alg, private = self.keys[kid]
        return jwt.encode(claims, private, algorithm=alg, headers={"kid": kid})

    def id_token_claims(self, **fields: Any) -> dict[str, Any]:
        """Return a valid ID token claim set (5 minutes); ``None`` values remove a claim."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": "oidc-user",
            "aud": CLIENT_ID,
            "iat": now,
            "exp": now + 300,
            "jti": uuid.uuid4().hex,
        }
        claims.update(fields)
        return {k: v for k, v in claims.items() if v is not None}

    def request_token(self, **body: Any) -> str:
        """Ask the token endpoint for an ID token, over HTTP like a client would."""
        request = urllib.request.Request(
            f"{self.issuer}/token",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=5) as response:
            return json.loads(response.read())["id_token"]

    # ------------------------------------------------------------------ HTTP

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                provider.requests[self.path] += 1
                if self.path == "/.well-known/openid-configuration":
                    self._send(200, provider.discovery())
                elif self.path == "/jwks":
                    gate = provider.jwks_gate
                    if gate is not None:
                        gate.wait(10)
                    self._send(200, provider.jwks())
                elif self.path == "/redirect":
                    self._send(302, {}, {"Location": f"{provider.issuer}/jwks"})
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                provider.requests[self.path] += 1
                if self.path != "/token":
                    self._send(404, {"error": "not_found"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                alg = body.pop("alg", "RS256")
                kid = body.pop("kid", None) or ("ec-1" if alg == "ES256" else "rsa-1")
                ttl = int(body.pop("ttl", 300))
                now = int(time.time())
                claims = provider.id_token_claims(exp=now + ttl, **body)
                self._send(200, {"id_token": provider.sign(claims, kid), "token_type": "Bearer"})

        return Handler

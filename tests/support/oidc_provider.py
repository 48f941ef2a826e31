"""node ``oidc-provider`` on 127.0.0.1: a certified OpenID provider for the ``oidc`` tests.

``scripts/node-packages.sh`` (run by ``make services``) installs it under
``tests/support/oidc/``. :class:`OIDCProvider` writes the provider's configuration (clients,
signing keys, ID token lifetime), starts ``node server.mjs`` and waits for it. ID tokens
come from the real authorization-code flow: :meth:`OIDCProvider.id_token` follows the
authorization request through the provider's development login and consent pages (any
login name is accepted), then redeems the code at the token endpoint, the way a relying
party's browser and back end would.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from tests.ports import free_port
from tests.support.processes import stop_group

HERE = Path(__file__).with_name("oidc")
CLIENT_ID = "toolkit-app"
CLIENT_SECRET = "oidc-client-secret-for-tests-0123456789"
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never fetched: the test reads the redirect


def rsa_jwk(kid: str) -> dict[str, Any]:
    """Return a fresh private RSA JWK (RS256 signing) named ``kid``."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key))
    return {**jwk, "kid": kid, "use": "sig", "alg": "RS256"}


class OIDCProvider:
    """One ``oidc-provider`` process; restart it with other keys to rotate them."""

    def __init__(self, workdir: Path, *, id_token_ttl: int = 3600) -> None:
        if not (HERE / "node_modules" / "oidc-provider").exists():
            raise RuntimeError("oidc-provider is missing: run scripts/node-packages.sh")
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.workdir = workdir
        self.id_token_ttl = id_token_ttl
        self.keys = [rsa_jwk("key-1")]
        self._process: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------------ process

    def start(self) -> OIDCProvider:
        config = {
            "issuer": self.issuer,
            "port": self.port,
            "idTokenTtl": self.id_token_ttl,
            "jwks": {"keys": self.keys},
            "clients": [
                {
                    "client_id": CLIENT_ID,
                    "client_secret": CLIENT_SECRET,
                    "redirect_uris": [REDIRECT_URI],
                    "grant_types": ["authorization_code"],
                    "response_types": ["code"],
                    "id_token_signed_response_alg": "RS256",
                }
            ],
        }
        path = self.workdir / "oidc-config.json"
        path.write_text(json.dumps(config))
        path.chmod(0o600)
        log = (self.workdir / "oidc.log").open("ab")
        self._process = subprocess.Popen(
            ["node", str(HERE / "server.mjs"), str(path)],
            cwd=HERE,
            stdout=subprocess.PIPE,
            stderr=log,
            env={**os.environ, "NODE_ENV": "test"},
            start_new_session=True,
        )
        line = self._process.stdout.readline() if self._process.stdout else b""
        if line.strip() != b"ready":
            self.stop()
            raise RuntimeError("oidc-provider did not start: " + self.log()[-2000:])
        return self

    def stop(self) -> None:
        process, self._process = self._process, None
        stop_group(process)

    def rotate(self, kid: str, *, keep_old: bool = True) -> None:
        """Restart on the same port signing with a new key ``kid`` (the old one kept or not)."""
        self.stop()
        self.keys = [rsa_jwk(kid), *(self.keys if keep_old else [])]
        self.start()

    def log(self) -> str:
        path = self.workdir / "oidc.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def __enter__(self) -> OIDCProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ the flow

    def id_token(self, login: str = "alice") -> str:
        """Sign in as ``login`` through the authorization-code flow; return the ID token."""
        import requests

        browser = requests.Session()
        state, nonce = secrets.token_urlsafe(8), secrets.token_urlsafe(8)
        answer = browser.get(
            f"{self.issuer}/auth",
            params={
                "client_id": CLIENT_ID,
                "response_type": "code",
                "scope": "openid email",
                "redirect_uri": REDIRECT_URI,
                "state": state,
                "nonce": nonce,
            },
            allow_redirects=False,
            timeout=10,
        )
        code = ""
        for _ in range(10):  # login, consent, and the redirects between them
            location = answer.headers.get("Location", "")
            if location.startswith(REDIRECT_URI):
                query = parse_qs(urlsplit(location).query)
                assert query.get("state") == [state], query
                code = query["code"][0]
                break
            if location:
                answer = browser.get(urljoin(self.issuer, location), allow_redirects=False)
                continue
            prompt = re.search(r'name="prompt" value="(\w+)"', answer.text)
            action = re.search(r'action="([^"]+)"', answer.text)
            assert prompt and action, answer.text[:500]
            form = {"prompt": prompt.group(1)}
            if prompt.group(1) == "login":
                form.update(login=login, password="any")
            answer = browser.post(
                urljoin(self.issuer, action.group(1)), data=form, allow_redirects=False
            )
        assert code, "the flow did not reach the redirect URI"
        basic = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        tokens = browser.post(
            f"{self.issuer}/token",
            data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI},
            headers={"Authorization": f"Basic {basic}"},
            timeout=10,
        )
        assert tokens.status_code == 200, tokens.text
        return str(tokens.json()["id_token"])

    def public_key_pem(self, kid: str) -> bytes:
        """Return the PEM of the public half of signing key ``kid`` (for forgery tests)."""
        from cryptography.hazmat.primitives import serialization
        from jwt.algorithms import RSAAlgorithm

        jwk = next(k for k in self.keys if k["kid"] == kid)
        public = RSAAlgorithm.from_jwk(json.dumps(jwk)).public_key()
        return public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

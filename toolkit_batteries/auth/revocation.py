"""Where revoked token ids (JWT ``jti``) are kept until their token would expire anyway.

The spec keeps revocations in a per-process memory store by default, so other processes
keep accepting a revoked token until it expires, and lets multi-instance deployments
inject a shared store from code. Stores are keyed by the token id, never by the token:
the token is a bearer secret and must not be copied into a second system.

Three stores ship:

* :class:`MemoryRevocationStore` (default): a dict in this process; entries are dropped
  once their token has expired.
* :class:`CacheRevocationStore`: any Django cache (the ``cache`` battery's adapters are
  ``BaseCache`` subclasses), one key per revoked id with a timeout of the seconds until
  the token expires; with the ``kvserver`` or ``db`` cache every process sees it.
* :class:`SessionRevocationStore`: the ``session`` battery's store, one marker record per
  revoked id that expires with the token.

Choosing one without code: the Django setting ``TOOLKIT_AUTH_REVOCATION`` (the ``TOOLKIT``
options are strictly decoded and the spec has no key for this, so it lives beside them)::

    TOOLKIT_AUTH_REVOCATION = "cache"              # services.cache("default")
    TOOLKIT_AUTH_REVOCATION = "cache:revocations"  # services.cache("revocations")
    TOOLKIT_AUTH_REVOCATION = "session"            # services.session("default")
    TOOLKIT_AUTH_REVOCATION = "myproject.auth.build_store"  # callable(ctx) -> store
    TOOLKIT_AUTH_REVOCATION = {"default": "cache", "partners": "memory"}  # per instance

Choosing one in code: ``JWTAuthenticator(...).with_revocation_store(store)``.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from toolkit_batteries.core.errors import ConfigurationError

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = [
    "SETTING",
    "CacheRevocationStore",
    "MemoryRevocationStore",
    "RevocationStore",
    "SessionRevocationStore",
    "store_from_settings",
    "valid_token_id",
]

#: The Django setting that picks the revocation store of the ``jwt`` adapter.
SETTING = "TOOLKIT_AUTH_REVOCATION"

#: Token ids stores accept: what ``issue`` writes (32 hex digits) and other sane ids.
_TOKEN_ID = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")

#: Characters a session id may hold (the session battery's rule).
_SESSION_SAFE = re.compile(r"[A-Za-z0-9_-]{1,100}")

#: A wall clock in seconds since the epoch (``time.time``); injectable for tests.
Clock = Callable[[], float]


def valid_token_id(token_id: Any) -> bool:
    """Tell whether ``token_id`` is a string a store may use in a key (1-128 safe chars)."""
    return isinstance(token_id, str) and _TOKEN_ID.fullmatch(token_id) is not None


@runtime_checkable
class RevocationStore(Protocol):
    """What the ``jwt`` and ``oidc`` adapters need from a revocation store."""

    def revoke(self, token_id: str, until: float) -> None:
        """Record ``token_id`` as revoked until the POSIX time ``until``; idempotent."""

    def is_revoked(self, token_id: str) -> bool:
        """Tell whether ``token_id`` is revoked now (unknown or lapsed ids are not)."""


class MemoryRevocationStore:
    """Revoked ids in this process's memory; other processes do not see them."""

    #: Seconds between sweeps of lapsed entries (each sweep is one pass over the dict).
    SWEEP_INTERVAL = 60.0

    def __init__(self, *, clock: Clock = time.time) -> None:
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock
        self._next_sweep = clock() + self.SWEEP_INTERVAL

    def revoke(self, token_id: str, until: float) -> None:
        """Record ``token_id`` until ``until``; keep the later time if already recorded."""
        now = self._clock()
        with self._lock:
            if until > self._until.get(token_id, 0.0):
                self._until[token_id] = until
            if now >= self._next_sweep:
                self._next_sweep = now + self.SWEEP_INTERVAL
                for key in [k for k, t in self._until.items() if t <= now]:
                    del self._until[key]

    def is_revoked(self, token_id: str) -> bool:
        """Tell whether ``token_id`` is recorded and its time has not passed."""
        until = self._until.get(token_id)
        if until is None:
            return False
        if until > self._clock():
            return True
        with self._lock:
            if self._until.get(token_id, math.inf) <= self._clock():
                del self._until[token_id]
        return False

    def __len__(self) -> int:
        return len(self._until)

    def __repr__(self) -> str:
        return f"<MemoryRevocationStore {len(self._until)} entries>"


class CacheRevocationStore:
    """Revoked ids in a Django cache (``get``/``set`` with a timeout in seconds)."""

    def __init__(
        self, cache: Any, *, prefix: str = "toolkit:auth:revoked:", clock: Clock = time.time
    ) -> None:
        for method in ("get", "set"):
            if not callable(getattr(cache, method, None)):
                raise TypeError(f"CacheRevocationStore needs a cache with {method}()")
        self.cache = cache
        self.prefix = prefix
        self._clock = clock

    def revoke(self, token_id: str, until: float) -> None:
        """Set a key for ``token_id`` that the cache drops when the token would expire."""
        seconds = math.ceil(until - self._clock())
        if seconds > 0:
            self.cache.set(self.prefix + token_id, 1, timeout=seconds)

    def is_revoked(self, token_id: str) -> bool:
        """Tell whether the cache still holds the key of ``token_id``."""
        return self.cache.get(self.prefix + token_id) is not None

    def __repr__(self) -> str:
        return f"<CacheRevocationStore {type(self.cache).__name__}>"


class SessionRevocationStore:
    """Revoked ids as marker records of the ``session`` battery's store.

    The session API hands out random ids, so the marker is written through the store's
    ``_insert`` primitive (the session battery's adapter contract) under the id
    ``tkrv_<token_id>``, or ``tkrv_h<sha256>`` for ids holding ``.`` or ``:``, which a
    session id cannot; ``get`` reads it back. The record's data names its kind, so the
    ``session`` auth adapter never accepts a marker as a login.
    """

    KIND = "toolkit.auth.revoked"
    PREFIX = "tkrv_"

    def __init__(self, store: Any, *, clock: Clock = time.time) -> None:
        if not callable(getattr(store, "_insert", None)) or not callable(
            getattr(store, "get", None)
        ):
            raise TypeError("SessionRevocationStore needs a toolkit session store")
        self.store = store
        self._clock = clock

    def _key(self, token_id: str) -> str:
        """Return the marker's session id: the token id, or its digest if it has ``.``/``:``."""
        if _SESSION_SAFE.fullmatch(token_id):
            return self.PREFIX + token_id
        return self.PREFIX + "h" + hashlib.sha256(token_id.encode()).hexdigest()

    def revoke(self, token_id: str, until: float) -> None:
        """Insert a marker record for ``token_id`` that expires with the token."""
        import json

        ttl_ms = math.ceil((until - self._clock()) * 1000)
        if ttl_ms > 0:
            payload = json.dumps({"kind": self.KIND, "until": until}, separators=(",", ":"))
            self.store._insert(self._key(token_id), payload, ttl_ms)

    def is_revoked(self, token_id: str) -> bool:
        """Tell whether the marker record of ``token_id`` is still alive."""
        data = self.store.get(self._key(token_id))
        return isinstance(data, dict) and data.get("kind") == self.KIND

    def __repr__(self) -> str:
        return f"<SessionRevocationStore {type(self.store).__name__}>"


def store_from_settings(ctx: OpenContext) -> Any | None:
    """Return the store ``TOOLKIT_AUTH_REVOCATION`` picks for ``ctx``'s instance.

    ``None`` means the default per-process memory store. A value naming another service
    opens it through the container (so it closes after ``auth``). Errors name the
    setting, never its value.
    """
    from django.conf import settings

    if not settings.configured:
        return None
    value = getattr(settings, SETTING, None)
    where = f"auth.{ctx.instance}: setting {SETTING}"
    if isinstance(value, Mapping):
        value = value.get(ctx.instance)
    if value is None or value == "" or value == "memory":
        return None
    if not isinstance(value, str):
        raise ConfigurationError(f"{where} must be a string or a mapping of instance to string")
    kind, _, name = value.partition(":")
    if kind == "cache" and "." not in value:
        cache = ctx.container.cache(name or "default")
        return CacheRevocationStore(cache, prefix=f"toolkit:auth:{ctx.instance}:revoked:")
    if kind == "session" and "." not in value:
        return SessionRevocationStore(ctx.container.session(name or "default"))
    if "." in value and ":" not in value:
        from toolkit_batteries.core.loading import import_dotted

        try:
            factory = import_dotted(value)
        except LookupError:
            raise ConfigurationError(f"{where} names a path that does not import") from None
        store = factory(ctx) if callable(factory) else factory
        if not isinstance(store, RevocationStore):
            raise ConfigurationError(
                f"{where}: the factory must return an object with revoke() and is_revoked()"
            )
        return store
    raise ConfigurationError(
        f'{where} must be "memory", "cache", "cache:<instance>", "session", '
        f'"session:<instance>" or a dotted path to a factory'
    )

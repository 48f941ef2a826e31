"""Where revoked token ids (JWT ``jti``) are kept until their token would expire anyway.

The spec keeps revocations in a per-process memory store by default, so other processes
keep accepting a revoked token until it expires, and lets multi-instance deployments
inject a shared store from code. Stores are keyed by the token id, never by the token:
the token is a bearer secret and must not be copied into a second system.

A revocation that is forgotten early fails open (a logged-out or stolen token works
again), so a shared store must **neither evict nor be emptied with a cache**. Stores:

* :class:`MemoryRevocationStore` (default): a dict in this process; entries are dropped
  once their token has expired, never before.
* :class:`KVServerRevocationStore`: keys ``toolkit:auth:<auth instance>:revoked:<id>`` on a
  key-value server, expiring with the token. They are outside every cache's namespace,
  so ``cache.clear()`` leaves them alone; a server that may evict them (``maxmemory`` with
  any policy but ``noeviction``) is refused when the store is built.
* :class:`SessionRevocationStore`: the ``session`` battery's store, one marker record per
  revoked id that expires with the token (on the ``db`` adapter, a row of the session
  model; on ``kvserver``, the eviction rule above applies).
* :class:`CacheRevocationStore`: a Django cache given in code, for caches that neither
  evict nor get cleared; known evicting backends (local memory, database, file,
  memcached, the toolkit's ``memory`` and ``db`` caches) are refused.

Choosing one without code: the Django setting ``TOOLKIT_AUTH_REVOCATION`` (the ``TOOLKIT``
options are strictly decoded and the spec has no key for this, so it lives beside them)::

    TOOLKIT_AUTH_REVOCATION = "cache"              # the server of cache "default" (kvserver)
    TOOLKIT_AUTH_REVOCATION = "cache:revocations"  # the server of cache "revocations"
    TOOLKIT_AUTH_REVOCATION = "session"            # services.session("default")
    TOOLKIT_AUTH_REVOCATION = "myproject.auth.build_store"  # callable(ctx) -> store
    TOOLKIT_AUTH_REVOCATION = {"default": "cache", "partners": "memory"}  # per instance

``"cache"`` needs a ``kvserver`` cache: the ``memory`` cache evicts at ``max_entries`` and
the ``db`` cache culls and truncates, so naming either fails at configuration with an
error naming the setting.

Choosing one in code: ``JWTAuthenticator(...).with_revocation_store(store)``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.core.sidesettings import SideSetting, read_side_setting

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = [
    "SETTING",
    "CacheRevocationStore",
    "KVServerRevocationStore",
    "MemoryRevocationStore",
    "RevocationStore",
    "SessionRevocationStore",
    "refuse_evicting_server",
    "store_from_settings",
    "valid_token_id",
]

logger = logging.getLogger("toolkit.auth")

#: The Django setting that picks the revocation store of the ``jwt`` adapter.
SETTING = "TOOLKIT_AUTH_REVOCATION"

#: Its declaration for the decoder of settings beside ``TOOLKIT``: instance -> store, where
#: ``"*"`` (a bare string) is every instance; ``TOOLKIT_AUTH_REVOCATION__<INSTANCE>`` sets one.
REVOCATION = SideSetting(
    SETTING, dict[str, str], doc="revocation store per auth instance", shorthand=lambda v: {"*": v}
)

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
        evicting = _evicting_cache(cache)
        if evicting:
            raise ConfigurationError(
                f"auth: a {evicting} cache evicts or culls entries, so a revocation kept "
                "there can be forgotten early; use a KVServerRevocationStore or a "
                "SessionRevocationStore"
            )
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


#: Django cache backends (module path prefixes) that evict, cull or expire early.
_EVICTING_BACKENDS = (
    ("django.core.cache.backends.locmem", "local-memory"),
    ("django.core.cache.backends.db", "database"),
    ("django.core.cache.backends.filebased", "file"),
    ("django.core.cache.backends.memcached", "memcached"),
)


def _evicting_cache(cache: Any) -> str:
    """Name the kind of ``cache`` when it is known to evict entries, else ``""``."""
    module = type(cache).__module__
    for prefix, kind in _EVICTING_BACKENDS:
        if module.startswith(prefix):
            return kind
    if module.startswith("toolkit_batteries.cache."):
        adapter = getattr(cache, "adapter_name", "")
        if adapter in ("memory", "db"):
            return f"toolkit {adapter}"
    return ""


class KVServerRevocationStore:
    """Revoked ids as keys of their own on a key-value server (``redis.Redis`` client).

    Each id is one key, ``<prefix><token id>``, whose expiry is the token's: the server
    forgets it exactly when the token could no longer verify. The prefix is outside
    every cache's namespace, so clearing a cache on the same server keeps revocations.
    """

    def __init__(self, client: Any, *, prefix: str, clock: Clock = time.time) -> None:
        self.client = client
        self.prefix = prefix
        self._clock = clock

    def revoke(self, token_id: str, until: float) -> None:
        """Set the id's key to expire at ``until``; a later time is kept if set twice."""
        milliseconds = math.ceil((until - self._clock()) * 1000)
        if milliseconds <= 0:
            return
        key = self.prefix + token_id
        current = self.client.pttl(key)
        if isinstance(current, int) and current >= milliseconds:
            return  # already revoked for at least as long
        self.client.set(key, b"1", px=milliseconds)

    def is_revoked(self, token_id: str) -> bool:
        """Tell whether the id's key is still on the server."""
        return bool(self.client.exists(self.prefix + token_id))

    def __repr__(self) -> str:
        return f"<KVServerRevocationStore prefix={self.prefix!r}>"


def refuse_evicting_server(client: Any, where: str, instance: str) -> None:
    """Raise ConfigurationError when the key-value server behind ``client`` may evict keys.

    Redis evicts under memory pressure unless ``maxmemory`` is 0 or the policy is
    ``noeviction``; every ``allkeys-*`` and ``volatile-*`` policy may drop a revocation
    key (they all carry an expiry). A server that refuses ``CONFIG GET`` (a managed
    service, an ACL) cannot be judged: a warning says so and the store is used. An
    unreachable server fails the open, closed.
    """
    from redis.exceptions import ResponseError

    from toolkit_batteries.core.transport import kv_unreachable

    unreachable = kv_unreachable(
        "auth", instance, "the revocation store's key-value server did not answer"
    )
    try:
        with unreachable:
            found = client.config_get("maxmemory*")
    except ResponseError:
        logger.warning(
            "%s: cannot read the key-value server's eviction policy (CONFIG GET refused); "
            "make sure it is noeviction or maxmemory is 0",
            where,
        )
        return
    policy = str(found.get("maxmemory-policy", "noeviction"))
    limit = int(found.get("maxmemory", 0) or 0)
    if limit and policy != "noeviction":
        raise ConfigurationError(
            f"{where}: the key-value server evicts keys under memory pressure "
            f"(maxmemory-policy {policy}), so a revocation could be forgotten early; "
            "set maxmemory-policy noeviction (or maxmemory 0) on that server, or use "
            '"session" over a db session store'
        )


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
    stores = read_side_setting(REVOCATION, getattr(settings, SETTING, None)) or {}
    where = f"auth.{ctx.instance}: setting {SETTING}"
    value = stores.get(ctx.instance, stores.get("*"))
    if value is None or value == "" or value == "memory":
        return None
    if not isinstance(value, str):
        raise ConfigurationError(f"{where} must be a string or a mapping of instance to string")
    kind, _, name = value.partition(":")
    if kind == "cache" and "." not in value:
        return _server_store(ctx, name or "default", where)
    if kind == "session" and "." not in value:
        session = ctx.container.session(name or "default")
        if getattr(session, "adapter_name", "") == "kvserver":
            refuse_evicting_server(session.client, where, ctx.instance)
        return SessionRevocationStore(session)
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


def _server_store(ctx: OpenContext, cache: str, where: str) -> KVServerRevocationStore:
    """Return a store on the key-value server of ``cache.<cache>``, outside its namespace.

    Only a ``kvserver`` cache has such a server: the ``memory`` cache evicts at
    ``max_entries`` and the ``db`` cache culls and is truncated by ``clear()``, so either
    would forget revocations; naming one fails here.
    """
    from toolkit_batteries.core.loading import resolve_adapter

    config = ctx.container.config
    if cache != "default" and cache not in config.instances("cache"):
        raise ConfigurationError(f"{where} names cache.{cache}, which is not configured")
    cfg = config.service("cache", cache)
    adapter, _ = resolve_adapter("cache", cfg.adapter)
    if adapter != "kvserver":
        raise ConfigurationError(
            f'{where}: cache.{cache} uses the "{adapter}" adapter, which evicts entries and '
            "is emptied by clear(), so revocations kept there could be forgotten; name a "
            'kvserver cache, or use "session" over a kvserver or db session store'
        )
    options = cfg.options
    client = ctx.pools.kvserver(
        ctx.service, options, instance=ctx.instance, url=str(options.url or "")
    )
    refuse_evicting_server(client, where, ctx.instance)
    return KVServerRevocationStore(client, prefix=f"toolkit:auth:{ctx.instance}:revoked:")

"""The cache service: each adapter IS a Django cache backend, built and held by ``caches``.

Every adapter is a :class:`django.core.cache.backends.base.BaseCache` subclass with
Django's constructor ``(location, params)``, so ``CACHES`` can name it and
``django.core.cache.caches`` builds it, holds one per thread, resets it on
``setting_changed`` and calls ``close()`` after every request. ``settings.py`` derives
``CACHES`` from ``TOOLKIT["cache"]`` (``slots.caches(TOOLKIT)``), and the container's
``open`` returns ``caches[instance]``, so ``services.cache()`` *is* ``caches["default"]``:
one object, one key namespace. Where Django has no such alias (a script), the container
builds the same class with Django's constructor and holds it itself.

The entry's parts:

* ``LOCATION``: the cache's name (the ``TOOLKIT`` instance). It names the memory store,
  the Redis key namespace (``toolkit:cache:<name>:``) and the ``db`` adapter's rows, so
  ``clear()`` removes this cache's entries and no other cache's.
* ``OPTIONS``: the battery's options (``url``, ``pool_size``, ``dsn``, ``max_entries``,
  ``serializer``...), decoded as strictly as ``TOOLKIT``: an unknown key fails with a "did
  you mean"; any spelling of case and underscores (``MAX_ENTRIES``) matches.
* ``TIMEOUT``, ``KEY_PREFIX``, ``VERSION``, ``KEY_FUNCTION``: Django's own meaning.

What this class adds to ``BaseCache``:

* a cheaper key check: Django's memcached-portability warning is kept, but a key that
  is short and printable (almost every key) skips its regular expression;
* :meth:`expiry_seconds`, the one place the timeout rules are written down;
* the container's identity (``service_name``, ``adapter_name``, ``instance``).

``close()`` does nothing: Django calls it after every request, and the store, client or
database belongs to the process (memory, kvserver) or to Django's connections (db).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from django.core.cache.backends.base import (
    DEFAULT_TIMEOUT,
    MEMCACHE_MAX_KEY_LENGTH,
    BaseCache,
    CacheKeyWarning,
    memcache_key_warnings,
)

from toolkit_batteries.core.adapter import ClosedResource, Service
from toolkit_batteries.core.options import Where, build_options, decode_mapping, normalize

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.core.slots import Held

    from .options import CacheOptions

__all__ = ["DEFAULT_TIMEOUT", "Cache", "ClosedResource", "decode_options"]

#: Django-only ``OPTIONS`` keys BaseCache itself reads; the battery ignores them.
_DJANGO_ONLY = frozenset({"cullfrequency"})
#: The source named by errors about ``CACHES`` entries.
SOURCE = "settings.CACHES"
#: The ``BaseCache`` calls that leave the process on a remote cache: what its ``@traced`` names.
REMOTE_OPERATIONS = (
    "get",
    "get_many",
    "has_key",
    "set",
    "add",
    "set_many",
    "touch",
    "incr",
    "delete",
    "delete_many",
    "clear",
)


def decode_options(
    params: Mapping[str, Any], instance: str, *, extra: tuple[str, ...] = ()
) -> tuple[CacheOptions, dict[str, Any]]:
    """Decode ``params["OPTIONS"]`` as the cache battery's options, strictly.

    Keys named in ``extra`` (folded) are not options: they are returned apart (the db
    adapter's ``database`` alias).
    """
    from .options import CacheOptions

    raw = dict(params.get("OPTIONS") or {})
    wanted = {normalize(name): name for name in extra}
    kept: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for key, value in raw.items():
        folded = normalize(str(key))
        if folded in wanted:
            kept[wanted[folded]] = value
        elif folded not in _DJANGO_ONLY:
            options[key] = value
    where = Where("cache", instance, SOURCE)
    return build_options(CacheOptions, decode_mapping(CacheOptions, options, where), where), kept


class Cache(Service, BaseCache):
    """Base of the cache adapters: ``BaseCache`` plus the container's contract."""

    service_name: ClassVar[str] = "cache"

    def __init__(self, location: Any, params: Mapping[str, Any]) -> None:
        """Read Django's cache parameters (``TIMEOUT``, ``KEY_PREFIX``, ``VERSION``...)."""
        BaseCache.__init__(self, dict(params or {}))
        #: The cache's name (``LOCATION``): the TOOLKIT instance it was derived from.
        self.instance = str(location or "").strip() or "default"

    @classmethod
    def open(cls, ctx: OpenContext) -> Held[Cache] | Cache:
        """Return ``caches[instance]``, or the container's own backend (see :mod:`.settings`)."""
        from .settings import open_cache

        return open_cache(cls, ctx)

    @classmethod
    def prepare(cls, ctx: OpenContext) -> dict[str, Any]:
        """Check what the adapter needs before the backend is used; return entry arguments.

        Runs in the container's ``open``: the db adapter finds its database and checks its
        table was migrated. Options are not decoded or leased here: the backend does
        that once, when it is built.
        """
        return {}

    @classmethod
    def opened(cls, cache: Cache, ctx: OpenContext) -> None:
        """Finish the container's ``open`` on the Django-held object (the db purge)."""

    # ------------------------------------------------------------------ keys

    def validate_key(self, key: str) -> None:
        """Warn about keys memcached would refuse, as Django does, but cheaply."""
        if len(key) <= MEMCACHE_MAX_KEY_LENGTH and key.isprintable() and " " not in key:
            return
        for warning in memcache_key_warnings(key):
            warnings.warn(warning, CacheKeyWarning, stacklevel=3)

    def make_and_validate_key(self, key: str, version: int | None = None) -> str:
        """Build the stored key from ``key`` and ``version`` and check it."""
        made = self.key_func(key, self.key_prefix, self.version if version is None else version)
        if len(made) > MEMCACHE_MAX_KEY_LENGTH or not made.isprintable() or " " in made:
            self.validate_key(made)
        return made

    # ------------------------------------------------------------------ batches

    def set_many(
        self,
        data: Mapping[str, Any],
        timeout: Any = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> list[str]:
        """Store every pair; return the keys that failed (always none: a failure raises).

        An empty mapping touches nothing; an adapter stores a batch in :meth:`_set_many`.
        """
        if data:
            self._set_many(data, timeout, version)
        return []

    def _set_many(self, data: Mapping[str, Any], timeout: Any, version: int | None) -> None:
        """Store a non-empty batch; by default one :meth:`set` per pair."""
        for key, value in data.items():
            self.set(key, value, timeout, version)

    # ------------------------------------------------------------------ timeouts

    def expiry_seconds(self, timeout: Any = DEFAULT_TIMEOUT) -> float | None:
        """Return the lifetime ``timeout`` asks for, in seconds; ``None`` is forever.

        ``DEFAULT_TIMEOUT`` is the cache's default; a result of 0 or less means the
        entry is expired as soon as it is written (adapters then delete the key).
        """
        if timeout is DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        if timeout is None:
            return None
        return float(timeout)

    def get_backend_timeout(self, timeout: Any = DEFAULT_TIMEOUT) -> float | None:
        """Return the lifetime in seconds (Django's hook; adapters use :meth:`expiry_seconds`)."""
        return self.expiry_seconds(timeout)

    # ------------------------------------------------------------------ lifecycle

    def close(self, **kwargs: Any) -> None:
        """Do nothing: Django calls this after every request; the process owns the store."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cache.{self.instance}>"

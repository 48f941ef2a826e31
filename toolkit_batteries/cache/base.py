"""The cache service: Django's ``BaseCache`` interface, opened by the container.

Every adapter is a real :class:`django.core.cache.backends.base.BaseCache`, so code
written against ``django.core.cache.caches`` works unchanged on ``services.cache()``:
``get/set/add/delete/touch/incr/decr/get_many/set_many/delete_many/has_key/clear``,
``timeout`` in seconds, ``DEFAULT_TIMEOUT`` meaning "the cache's default" (300 s, as
Django), ``None`` meaning "never expires" and ``0`` or less meaning "expired at once",
keys built by ``KEY_PREFIX``/``VERSION``/``KEY_FUNCTION`` exactly as Django builds them.

What this class adds to ``BaseCache``:

* a cheaper key check: Django's memcached-portability warning is kept, but a key that
  is short and printable (almost every key) skips its regular expression;
* :meth:`expiry_seconds`, the one place the timeout rules are written down;
* the container's identity (``service_name``, ``adapter_name``, ``instance``) and
  :meth:`close`, which the container calls once at shutdown. Using an adapter after that
  raises :class:`ServiceUnavailableError`; the classes in :mod:`.backends` override
  ``close`` because Django calls it after every request.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

from django.core.cache.backends.base import (
    DEFAULT_TIMEOUT,
    MEMCACHE_MAX_KEY_LENGTH,
    BaseCache,
    CacheKeyWarning,
    memcache_key_warnings,
)

from toolkit_batteries.core.adapter import ClosedResource, Service

__all__ = ["DEFAULT_TIMEOUT", "Cache", "ClosedResource"]


class Cache(Service, BaseCache):
    """Base of the cache adapters: ``BaseCache`` plus the container's contract."""

    service_name: ClassVar[str] = "cache"

    def __init__(self, params: Mapping[str, Any] | None = None, *, instance: str = "default"):
        """Read Django's cache parameters (``TIMEOUT``, ``KEY_PREFIX``, ``VERSION``...)."""
        BaseCache.__init__(self, dict(params or {}))
        self.instance = instance

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
        """Release what the adapter holds; the container calls this once, at shutdown."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cache.{self.instance}>"

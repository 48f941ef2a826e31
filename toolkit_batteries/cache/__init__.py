"""The ``cache`` battery: a key/value cache with TTL, as a Django ``BaseCache``.

Get the configured cache from the registry (``services.cache()``) or a container
(``container.cache()``); pick ``memory`` (the default), ``kvserver`` or ``db`` in
settings. Every adapter is a :class:`django.core.cache.backends.base.BaseCache`, so it
has Django's whole cache API; :mod:`.backends` offers the same adapters to Django's
``CACHES`` setting.
"""

from __future__ import annotations

from .base import DEFAULT_TIMEOUT, Cache

__all__ = ["DEFAULT_TIMEOUT", "Cache"]

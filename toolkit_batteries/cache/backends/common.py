"""What the ``CACHES`` backends share: option decoding and the process-wide pool registry."""

from __future__ import annotations

import atexit
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import PoolRegistry

__all__ = ["INSTANCE", "close_backends", "decode_options", "pools", "single_location"]

#: Django-only parameters BaseCache reads from OPTIONS that the battery has no use for.
_DJANGO_ONLY = frozenset({"cullfrequency"})
#: The instance name the backends' pools and errors carry.
INSTANCE = "django"

_lock = threading.Lock()
_registry: PoolRegistry | None = None


def decode_options(adapter: str, params: Mapping[str, Any]) -> Any:
    """Decode ``params["OPTIONS"]`` as the cache battery's options, strictly."""
    raw = dict(params.get("OPTIONS") or {})
    options = {
        key: value
        for key, value in raw.items()
        if str(key).replace("_", "").lower() not in _DJANGO_ONLY
    }
    config = Config.load({"cache": {INSTANCE: {"adapter": adapter, "options": options}}}, {})
    return config.service("cache", INSTANCE).options


def pools() -> PoolRegistry:
    """Return the registry of clients and pools shared by every backend in the process."""
    global _registry
    with _lock:
        if _registry is None or _registry.closed:
            _registry = PoolRegistry()
        return _registry


def close_backends() -> None:
    """Close the clients and pools the backends opened (also run at process exit)."""
    global _registry
    with _lock:
        registry, _registry = _registry, None
    if registry is not None:
        registry.close()


atexit.register(close_backends)


def single_location(server: Any, field: str = "LOCATION") -> str:
    """Return the one server named by ``LOCATION`` (a string or a one-item list)."""
    if isinstance(server, Sequence) and not isinstance(server, str):
        if len(server) > 1:
            raise InvalidOptionsError(
                "cache",
                field,
                "must name one server (replicas are not supported)",
                instance=INSTANCE,
            )
        server = server[0] if server else ""
    return str(server or "").strip()

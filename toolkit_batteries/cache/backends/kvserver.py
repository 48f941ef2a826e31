"""``KVServerCache``: the kvserver adapter as a ``CACHES`` backend; ``LOCATION`` is the server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit_batteries.core.pools import resolve_kv_address

from ..adapters import kvserver as kv_adapter
from .common import INSTANCE, decode_options, pools, single_location

__all__ = ["KVServerCache"]


class KVServerCache(kv_adapter.KVServerCache):
    """The kvserver adapter as a ``CACHES`` backend; ``LOCATION`` is the server."""

    def __init__(self, server: Any, params: Mapping[str, Any]) -> None:
        """Borrow the process-wide client for ``server`` (``OPTIONS["url"]`` if empty)."""
        options = decode_options("kvserver", params)
        url = single_location(server) or options.url
        address = resolve_kv_address("cache", options, instance=INSTANCE, url=url)
        client = pools().kvserver(
            "cache", options, instance=INSTANCE, url=url, dedicated=bool(options.dedicated_pool)
        )
        prefix = str(params.get("KEY_PREFIX", "") or "")
        super().__init__(
            client,
            params,
            namespace=f"toolkit:cache:django:{prefix}:",
            instance=INSTANCE,
            target=address.describe(),
        )

    def close(self, **kwargs: Any) -> None:
        """Keep the shared client: Django calls this after every request."""

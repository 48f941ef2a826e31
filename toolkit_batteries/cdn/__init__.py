"""The ``cdn`` battery: purge cached content by URL and by cache tag.

Get the configured service from the registry (``services.cdn()``) or a container; pick
``noop`` (the default: purges are discarded, and it says so at open) or ``cdn_a`` (the
provider's cache-purge API through its SDK, over the guarded HTTP transport) in settings.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import CDN, CDNError, CDNPurgeError, InvalidPurgeError

__all__ = ["CDN", "CDNError", "CDNPurgeError", "InvalidPurgeError"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "CDN": "base",
    "CDNError": "base",
    "CDNPurgeError": "base",
    "InvalidPurgeError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

"""The ``cdn`` battery: purge cached content by URL and by cache tag.

Get the configured service from the registry (``services.cdn()``) or a container; pick
``noop`` (the default: purges are discarded, and it says so at open) or ``cdn_a`` (the
provider's cache-purge API through its SDK, over the guarded HTTP transport) in settings.
"""

from __future__ import annotations

from .base import CDN, CDNError, CDNPurgeError, InvalidPurgeError

__all__ = ["CDN", "CDNError", "CDNPurgeError", "InvalidPurgeError"]

"""The ``cdn`` battery: purge cached content by URL and by cache tag.

Get the configured service from the registry (``services.cdn()``) or a container; pick
``noop`` (the default: purges are discarded, and it says so at open) or ``cdn_a`` (the
provider's cache-purge API through its SDK, over the guarded HTTP transport) in settings.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="CDN CDNError CDNPurgeError InvalidPurgeError",
)

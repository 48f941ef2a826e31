"""The ``cache`` battery: a key/value cache with TTL, and each adapter IS a Django backend.

Pick ``memory`` (the default), ``kvserver`` or ``db`` in ``TOOLKIT["cache"]`` and derive
Django's ``CACHES`` from it in ``settings.py``::

    from toolkit_batteries.cache import django_cache_settings
    CACHES = django_cache_settings(TOOLKIT)

Then ``services.cache()`` (or ``container.cache()``) is ``caches["default"]``: one
object, one key namespace, built and held by Django, so ``cache_page``, DRF throttles and
cached sessions use the configured cache. A script's ``Container(config)`` without Django
settings gets the same classes, registered with ``caches`` at run time.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Cache DEFAULT_TIMEOUT",
    settings="django_cache_settings",
)

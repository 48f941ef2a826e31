"""Derive ``CACHES`` from ``TOOLKIT["cache"]``, and find the alias holding an instance.

In ``settings.py``::

    CACHES = django_cache_settings(TOOLKIT)

gives one alias per ``cache`` instance (instance ``default`` -> alias ``default``), each
entry naming the adapter's class, so ``caches["default"]`` is the configured cache and
``services.cache()`` returns that very object. Django's own keys stay settable per alias::

    CACHES = django_cache_settings(TOOLKIT, overrides={"default": {"KEY_PREFIX": "web"}})

The container's ``open`` derives the same entry from the same configuration (one function,
:func:`cache_entry`), then asks :func:`~toolkit_batteries.core.slots.slot_alias` which alias
holds it; when none does (a script's ``Container(config)``, a test's ``override_settings``
of ``TOOLKIT`` alone) the entry is registered with ``caches`` at run time, so Django still
builds and holds the same class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import ConfigurationError, UnknownAdapterError

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.core.slots import Held

    from .base import Cache

__all__ = ["ALIAS_PREFIX", "cache_entry", "django_cache_settings", "open_held"]

#: Prefix of the ``caches`` aliases registered at run time (``toolkit_cache_<digest>``).
ALIAS_PREFIX = "toolkit_cache"
#: Django keys ``overrides`` may set; the rest of an entry is derived from TOOLKIT.
DJANGO_KEYS = frozenset({"TIMEOUT", "KEY_PREFIX", "VERSION", "KEY_FUNCTION"})
#: Options that never go into an entry (the legacy duplicate of the outer adapter).
_NOT_IN_ENTRY = frozenset({"adapter"})


def _backend(adapter: str) -> tuple[str, str]:
    """Return ``(kind, dotted path)`` of a cache adapter name, importing only user classes."""
    from toolkit_batteries.core.loading import adapter_table, resolve_adapter

    table = adapter_table("cache")
    text = adapter.strip()
    canonical = table.names.get(text.lower())
    if canonical is not None:
        return canonical, table.adapters[canonical]
    if "." not in text:
        raise UnknownAdapterError("cache", text or repr(adapter), table.available())
    _, cls = resolve_adapter("cache", text)
    return str(getattr(cls, "adapter_name", "")), text


def _non_default_options(options: Any) -> dict[str, Any]:
    """Return the options that differ from their defaults, as settings would write them."""
    from toolkit_batteries.core.options import options_to_dict

    from .options import CacheOptions

    given = options_to_dict(options, redact_secrets=False)
    defaults = options_to_dict(CacheOptions(), redact_secrets=False)
    return {
        key: value
        for key, value in given.items()
        if key not in _NOT_IN_ENTRY and value != defaults.get(key)
    }


def cache_entry(
    adapter: str, instance: str, options: Any, *, database: str = "default"
) -> dict[str, Any]:
    """Return the ``CACHES`` entry of one ``cache`` instance.

    ``database`` is the ``DATABASES`` alias of the ``db`` service, used by the ``db``
    adapter when its ``dsn`` is empty (``default`` under ``django_databases``).
    """
    kind, path = _backend(adapter)
    given = _non_default_options(options)
    if kind == "db" and not str(options.dsn or "").strip():
        given["database"] = database
    return {"BACKEND": path, "LOCATION": instance, "OPTIONS": given}


def django_cache_settings(
    config: Config | Mapping[str, Any] | None = None,
    *,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Return the ``CACHES`` setting ``TOOLKIT["cache"]`` implies (``default`` first).

    ``config`` is a loaded :class:`Config`, a ``TOOLKIT`` mapping (the environment is
    applied on top, as the container does), or ``None`` for ``settings.TOOLKIT``.
    ``overrides`` adds Django's own keys per alias (``TIMEOUT``, ``KEY_PREFIX``,
    ``VERSION``, ``KEY_FUNCTION``); ``OPTIONS`` are the battery's options and are set in
    ``TOOLKIT`` so the container derives the same entry.
    """
    loaded = Config.of(config)
    names = loaded.instances("cache")
    caches: dict[str, dict[str, Any]] = {}
    for instance in ["default", *sorted(set(names) - {"default"})]:
        cfg = loaded.service("cache", instance)
        caches[instance] = cache_entry(cfg.adapter, cfg.instance, cfg.options)
    for alias, extra in (overrides or {}).items():
        if alias not in caches:
            raise ConfigurationError(
                f'toolkit: cache: overrides name the alias "{alias}", which TOOLKIT["cache"] '
                f"does not configure (aliases: {', '.join(caches)})"
            )
        unknown = sorted(set(extra) - DJANGO_KEYS)
        if unknown:
            raise ConfigurationError(
                f"toolkit: cache.{alias}: overrides may set {', '.join(sorted(DJANGO_KEYS))}; "
                f"not {', '.join(unknown)} (set the battery's options in TOOLKIT['cache'])"
            )
        caches[alias].update(extra)
    return caches


def open_held(cls: type[Cache], ctx: OpenContext) -> Held[Cache]:
    """Find (or register) the ``caches`` alias of ``ctx``'s instance; check it can work."""
    from django.core.cache import InvalidCacheBackendError, caches

    from toolkit_batteries.core.djangoready import ensure_django
    from toolkit_batteries.core.slots import Held, slot_alias

    ensure_django()
    entry = cache_entry(ctx.adapter, ctx.instance, ctx.options, **cls.prepare(ctx))
    entry["BACKEND"] = f"{cls.__module__}.{cls.__qualname__}"
    alias = slot_alias(caches, entry, preferred=ctx.instance, prefix=ALIAS_PREFIX)

    def get() -> Cache:
        nonlocal alias
        try:
            return caches[alias]
        except InvalidCacheBackendError:
            # CACHES changed (override_settings): find or register the entry again.
            alias = slot_alias(caches, entry, preferred=ctx.instance, prefix=ALIAS_PREFIX)
            return caches[alias]

    cache = get()  # build it now, so a bad option fails the open, not the first call
    if getattr(ctx.options, "verbose", False):
        ctx.logger.info(
            "cache.%s: %s, Django cache alias %s",
            ctx.instance,
            cls.adapter_name,
            alias,
            extra={"service": "cache", "instance": ctx.instance},
        )
    cls.opened(cache, ctx)
    return Held(get, alias)

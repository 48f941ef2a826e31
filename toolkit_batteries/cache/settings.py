"""Derive ``CACHES`` from ``TOOLKIT["cache"]``, and find the alias holding an instance.

In ``settings.py``::

    CACHES = django_cache_settings(TOOLKIT)

gives one alias per ``cache`` instance (instance ``default`` -> alias ``default``), each
entry naming the adapter's class, so ``caches["default"]`` is the configured cache and
``services.cache()`` returns that very object. Django's own keys stay settable per alias::

    CACHES = django_cache_settings(TOOLKIT, overrides={"default": {"KEY_PREFIX": "web"}})

The container's ``open`` (:func:`open_cache`) returns ``caches[instance]`` when that alias
holds this adapter for this instance, and otherwise builds the backend itself from the
same entry (:func:`cache_entry`) with Django's constructor: nothing is registered with
``caches`` at run time, and the options are decoded once, in the backend.
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

__all__ = ["cache_entry", "django_cache_settings", "open_cache"]

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


def open_cache(cls: type[Cache], ctx: OpenContext) -> Held[Cache] | Cache:
    """Return Django's object for ``ctx``'s instance, or build one where Django has none.

    Django's handler is the registry: when ``CACHES`` has an alias named like the instance
    whose entry is this adapter's (``slots.caches(TOOLKIT)`` wrote it), the container
    hands out ``caches[alias]`` on every call (a :class:`Held`, one object per thread, as
    Django keeps them) and builds nothing. Otherwise (a script's ``Container(config)``, a
    test's ``override_settings(TOOLKIT=...)`` without ``CACHES``) it builds the backend
    itself with Django's constructor from the derived entry, and nothing is registered
    with ``caches`` at run time. Either way the entry's options are decoded once, by
    the backend.
    """
    from django.core.cache import caches

    from toolkit_batteries.core.djangoready import ensure_django
    from toolkit_batteries.core.slots import Held

    ensure_django()
    extra = cls.prepare(ctx)  # the db adapter's database and table check
    alias = ctx.instance
    configured = caches.settings.get(alias)
    if configured is not None and _is_entry_of(configured, cls, ctx):
        cache: Cache = caches[alias]  # built now, so a bad option fails the open
        held: Held[Cache] | Cache = Held(lambda: caches[alias], alias)
    else:
        entry = cache_entry(ctx.adapter, ctx.instance, ctx.options, **extra)
        cache = held = cls(entry["LOCATION"], entry)
        alias = ""
    if getattr(ctx.options, "verbose", False):
        ctx.logger.info(
            "cache.%s: %s, %s",
            ctx.instance,
            cls.adapter_name,
            f"Django cache alias {alias}" if alias else "held by the container",
            extra={"service": "cache", "instance": ctx.instance},
        )
    cls.opened(cache, ctx)
    return held


def _is_entry_of(configured: Mapping[str, Any], cls: type[Cache], ctx: OpenContext) -> bool:
    """Tell whether a ``CACHES`` entry is ``cls`` for ``ctx``'s instance (by name, not options)."""
    backend = str(configured.get("BACKEND", ""))
    paths = {f"{cls.__module__}.{cls.__qualname__}", ctx.adapter}
    location = str(configured.get("LOCATION", "") or "").strip() or "default"
    return backend in paths and location == ctx.instance

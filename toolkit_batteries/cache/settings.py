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
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.core.slots import Held, check_override_keys, entry_options, held_by_django

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

    from .base import Cache

__all__ = ["cache_entry", "django_cache_settings", "open_cache"]

#: Django keys ``overrides`` may set; the rest of an entry is derived from TOOLKIT.
DJANGO_KEYS = frozenset({"TIMEOUT", "KEY_PREFIX", "VERSION", "KEY_FUNCTION"})
#: Options that never go into an entry (the legacy duplicate of the outer adapter).
_NOT_IN_ENTRY = frozenset({"adapter"})


def _backend(adapter: str) -> tuple[str, str]:
    """Return ``(kind, dotted path)`` of a cache adapter name, importing only user classes."""
    from toolkit_batteries.core.loading import resolve_adapter, table_entry

    entry = table_entry("cache", adapter)
    if entry is not None:
        return entry
    text = adapter.strip()
    _, cls = resolve_adapter("cache", text)
    return str(getattr(cls, "adapter_name", "")), text


def cache_entry(
    adapter: str, instance: str, options: Any, *, database: str = "default"
) -> dict[str, Any]:
    """Return the ``CACHES`` entry of one ``cache`` instance.

    ``database`` is the ``DATABASES`` alias of the ``db`` service, used by the ``db``
    adapter when its ``dsn`` is empty (``default`` under ``django_databases``).
    """
    kind, path = _backend(adapter)
    given = entry_options(options, without=_NOT_IN_ENTRY)
    if kind == "db" and not str(options.dsn or "").strip():
        given["database"] = database
    return {"BACKEND": path, "LOCATION": instance, "OPTIONS": given}


def django_cache_settings(
    config: Config | Mapping[str, Any] | None = None,
    *,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Return the ``CACHES`` setting ``TOOLKIT["cache"]`` implies (``default`` first).

    ``config`` is what :meth:`Config.of` takes. ``overrides`` adds Django's own keys per
    alias (``TIMEOUT``, ``KEY_PREFIX``, ``VERSION``, ``KEY_FUNCTION``); ``OPTIONS`` are the
    battery's options and are set in ``TOOLKIT`` so the container derives the same entry.
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
        check_override_keys("cache", alias, extra, DJANGO_KEYS)
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

    ensure_django()
    extra = cls.prepare(ctx)  # the db adapter's database and table check
    found = held_by_django(caches, caches.settings, cls, ctx, _instance_of)
    if found is not None:
        cache: Cache = found.get()  # built now, so a bad option fails the open
        held: Held[Cache] | Cache = found
        alias = found.alias
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


def _instance_of(configured: Mapping[str, Any]) -> str:
    """Return the instance a ``CACHES`` entry serves: its ``LOCATION`` (by name, not options)."""
    return str(configured.get("LOCATION", "") or "").strip() or "default"

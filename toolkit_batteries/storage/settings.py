"""Derive ``STORAGES`` from ``TOOLKIT["storage"]``, and find the alias holding an instance.

In ``settings.py``::

    STORAGES = django_storage_settings(TOOLKIT)

gives one alias per ``storage`` instance (instance ``default`` -> alias ``default``, which
is ``default_storage`` and what ``FileField`` uses), plus Django's own ``staticfiles``
entry unless an instance named ``staticfiles`` replaces it (then ``collectstatic`` writes
through the battery). Each entry's ``OPTIONS`` are the instance name, the battery options
that differ from their defaults, and the entry's own ``bucket`` (the bucket the storage
object itself reads and writes)::

    STORAGES = django_storage_settings(TOOLKIT, overrides={"default": {"bucket": "media"}})

The container's ``open`` returns ``storages[instance]`` when that alias holds this adapter
for the instance; otherwise (a script's ``Container(config)``, a test's
``override_settings`` of ``TOOLKIT`` alone) it builds the same class from the same entry
and holds it itself: nothing is registered with ``storages`` at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.core.slots import Held, check_override_keys, entry_options, held_by_django

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

    from .base import Storage

__all__ = ["django_storage_settings", "open_held", "storage_entry"]

#: Entry keys ``overrides`` may set; the options come from TOOLKIT.
OVERRIDE_KEYS = frozenset({"bucket"})
#: Django's own ``staticfiles`` entry, kept unless an instance replaces it.
STATICFILES = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}


def _backend(adapter: str) -> str:
    """Return the dotted path of a storage adapter name, importing only user classes."""
    from toolkit_batteries.core.loading import resolve_adapter, table_entry

    entry = table_entry("storage", adapter)
    if entry is not None:
        return entry[1]
    text = adapter.strip()
    resolve_adapter("storage", text)
    return text


def storage_entry(adapter: str, instance: str, options: Any, *, bucket: str = "") -> dict[str, Any]:
    """Return the ``STORAGES`` entry of one ``storage`` instance."""
    given: dict[str, Any] = {"instance": instance, **entry_options(options)}
    if bucket:
        given["bucket"] = bucket
    return {"BACKEND": _backend(adapter), "OPTIONS": given}


def django_storage_settings(
    config: Config | Mapping[str, Any] | None = None,
    *,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Return the ``STORAGES`` setting ``TOOLKIT["storage"]`` implies (``default`` first).

    ``config`` is what :meth:`Config.of` takes; ``overrides`` sets an entry's ``bucket``
    per alias.
    """
    loaded = Config.of(config)
    names = loaded.instances("storage")
    extra = dict(overrides or {})
    for alias, keys in extra.items():
        if alias not in ["default", *names]:
            raise ConfigurationError(
                f'toolkit: storage: overrides name the alias "{alias}", which '
                f'TOOLKIT["storage"] does not configure'
            )
        check_override_keys("storage", alias, keys, OVERRIDE_KEYS)
    storages: dict[str, dict[str, Any]] = {}
    for instance in ["default", *sorted(set(names) - {"default"})]:
        cfg = loaded.service("storage", instance)
        bucket = str(extra.get(instance, {}).get("bucket", "") or "")
        storages[instance] = storage_entry(cfg.adapter, cfg.instance, cfg.options, bucket=bucket)
    storages.setdefault("staticfiles", dict(STATICFILES))
    return storages


def open_held(cls: type[Storage], ctx: OpenContext) -> Held[Storage] | Storage:
    """Return Django's ``storages[instance]``, or build the storage where Django has none.

    ``storages`` is the registry: when ``STORAGES`` has an alias named like the instance
    holding this adapter for it (``slots.storages(TOOLKIT)`` wrote it; a configured entry
    may add its own ``bucket``), the container hands out ``storages[alias]``. Otherwise
    (a script's ``Container(config)``, a test's ``override_settings(TOOLKIT=...)``
    alone) it builds the class with Django's constructor from the derived entry and holds
    it itself; nothing is registered with ``storages`` at run time.
    """
    from django.core.files.storage import storages

    from toolkit_batteries.core.djangoready import ensure_django

    ensure_django()
    found = held_by_django(storages, storages.backends, cls, ctx, _instance_of)
    if found is not None:
        storage: Storage = found.get()  # built now, so a bad option fails the open
        held: Held[Storage] | Storage = found
    else:
        entry = storage_entry(ctx.adapter, ctx.instance, ctx.options)
        storage = held = cls(**entry["OPTIONS"])
    storage.apply_policy_sync()
    return held


def _instance_of(configured: Mapping[str, Any]) -> str:
    """Return the instance a ``STORAGES`` entry serves: its ``OPTIONS["instance"]``."""
    return str((configured.get("OPTIONS") or {}).get("instance", "") or "default")

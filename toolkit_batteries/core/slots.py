"""Django's slots: the objects Django's handlers hold, and the aliases SQL batteries derive.

Where Django has a slot for a service (``CACHES``, ``STORAGES``, ``DATABASES``, ``TASKS``,
``EMAIL_BACKEND``, ``SESSION_ENGINE``), the battery's adapter IS the Django backend and
Django's handler (``caches``, ``storages``, ``connections``, ...) builds and holds it.
``settings.py`` derives every slot from ``TOOLKIT`` with :mod:`toolkit_batteries.slots`.

What stays here:

* :class:`Held`: what an adapter's ``open`` returns for an object Django keeps per thread
  (``caches[alias]``, ``storages[alias]``, a mail connection): the container calls its
  getter on every accessor call instead of caching one object, and never closes it.
  ``cache`` and ``storage`` find their alias by the instance's name; where Django has
  none, they build the backend themselves and register nothing.
* :func:`slot_alias`: the ``DATABASES`` alias of a battery's own ``dsn`` (one per
  database, so the ORM and every SQL battery share a connection per thread) and the
  ``TASKS`` alias of a queue instance, which Django's handlers must know by name
  (``using=alias``, ``task.using(backend=alias)``); registered at run time only when
  settings did not derive it (a script's ``Container(config)``, a test's
  ``override_settings(TOOLKIT=...)``). It never serves ``CACHES``, ``STORAGES``, mail or
  sessions: those batteries find their alias by the instance's name or build the backend
  themselves, and register nothing.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from .errors import ConfigurationError
from .options import options_to_dict

__all__ = ["Held", "check_override_keys", "entry_options", "held_by_django", "slot_alias"]

T = TypeVar("T")

_lock = threading.Lock()


class Held(Generic[T]):
    """An object Django's handler holds; the container asks the handler on every call."""

    __slots__ = ("alias", "get")

    def __init__(self, get: Callable[[], T], alias: str = "") -> None:
        #: Returns the handler's object for the calling thread (``caches[alias]``).
        self.get = get
        #: The handler alias the object lives under, for display and tests.
        self.alias = alias

    def __repr__(self) -> str:
        return f"<Held {self.alias or self.get!r}>"


def _entry_digest(entry: Mapping[str, Any]) -> str:
    """Return a short stable digest of a slot entry (its JSON form, keys sorted)."""
    text = json.dumps(entry, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _matches(configured: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    """Tell whether ``configured`` has every key of ``entry`` with the same value.

    Django fills defaults into a configured entry (``ATOMIC_REQUESTS``, ``TIMEOUT``...),
    so only the keys the derived entry names are compared; an empty mapping in the
    derived entry equals a missing key.
    """
    for key, value in entry.items():
        have = configured.get(key)
        if have != value and not (value in ({}, "", None) and have in ({}, "", None)):
            return False
    return True


def slot_alias(handler: Any, entry: Mapping[str, Any], *, preferred: str, prefix: str) -> str:
    """Return the alias of ``handler`` whose entry is ``entry``, registering one if none is.

    ``handler`` is one of Django's connection handlers (``django.db.connections``,
    ``django.core.cache.caches``, ``django_tasks.task_backends``): anything with a
    ``settings`` mapping of alias -> entry. ``preferred`` is tried first (the instance
    name, so instance ``default`` lands on alias ``default``), then every other alias in
    settings order. When none matches, ``entry`` is added to the handler's settings as
    ``<prefix>_<digest>``: the same configuration always gets the same alias, so ten
    services pointed at one database share one alias (and one connection per thread).
    """
    configured: dict[str, Any] = handler.settings
    candidates = [preferred, *(alias for alias in configured if alias != preferred)]
    for alias in candidates:
        current = configured.get(alias)
        if current is not None and _matches(current, entry):
            return alias
    alias = f"{prefix}_{_entry_digest(entry)}"
    with _lock:
        configured = handler.settings  # re-read: a setting_changed may have rebuilt it
        if alias not in configured:
            configured[alias] = _configured(handler, alias, entry)
    return alias


def _configured(handler: Any, alias: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``entry`` with the defaults Django's handler fills into configured entries."""
    configure = getattr(handler, "configure_settings", None)
    if configure is None:
        return dict(entry)
    # Django's database handler insists on a "default" entry in what it configures.
    return configure({"default": dict(entry)})["default"]


def entry_options(options: Any, *, without: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Return what a derived ``CACHES``/``STORAGES`` entry's ``OPTIONS`` hold of ``options``.

    Only the options that differ from their class's defaults (secrets as given: the entry
    is the backend's constructor arguments), so an entry stays short and a default changed
    in the toolkit reaches every project that did not set it. ``without`` names options
    that never go into an entry.
    """
    given = options_to_dict(options, redact_secrets=False)
    defaults = options_to_dict(type(options)(), redact_secrets=False)
    return {
        key: value
        for key, value in given.items()
        if key not in without and value != defaults.get(key)
    }


def check_override_keys(service: str, alias: str, keys: Any, allowed: frozenset[str]) -> None:
    """Refuse ``overrides`` keys of a derived entry other than ``allowed`` (Django's own).

    The battery's options are set in ``TOOLKIT``, never through ``overrides``, so the
    container and Django's handler derive the same entry.
    """
    unknown = sorted(set(keys) - allowed)
    if unknown:
        raise ConfigurationError(
            f"toolkit: {service}.{alias}: overrides may set {', '.join(sorted(allowed))}; "
            f"not {', '.join(unknown)} (set the battery's options in TOOLKIT['{service}'])"
        )


def held_by_django(
    handler: Any,
    entries: Mapping[str, Mapping[str, Any]],
    cls: type,
    ctx: Any,
    instance_of: Callable[[Mapping[str, Any]], str],
) -> Held[Any] | None:
    """Return ``Held(handler[instance])`` when Django's handler holds ``ctx``'s instance.

    The rule ``cache`` and ``storage`` share: the alias is the instance's name, and its
    entry (in ``entries``, the handler's settings) names ``cls`` or the configured
    adapter path, for this instance (``instance_of(entry)``). The caller builds the object
    at once (``held.get()``), so a bad option fails the open. ``None`` means Django holds
    no such entry: the battery builds the backend itself and registers nothing.
    """
    alias = ctx.instance
    configured = entries.get(alias)
    if configured is None or instance_of(configured) != alias:
        return None
    if str(configured.get("BACKEND", "")) not in {
        f"{cls.__module__}.{cls.__qualname__}",
        ctx.adapter,
    }:
        return None
    return Held(lambda: handler[alias], alias)

"""The process registry of plugin factories (third-party services under ``TOOLKIT["plugins"]``).

A plugin package registers its factory once, at import time (an ``AppConfig.ready()`` is a
good place), and the project names it in settings::

    register_plugin("acme_sms", AcmeSMS.open)            # in the plugin package

    TOOLKIT = {"plugins": {"sms": {"adapter": "acme_sms", "options": {"token": "..."}}}}

    services.plugin("sms").send(...)                     # in the project

The factory receives an :class:`~toolkit_batteries.core.adapter.OpenContext` whose
``options`` is the raw, read-only mapping from settings (the plugin validates it). A
plugin may instead be named by dotted path (``"acme.sms.AcmeSMS"``), in which case no
registration is needed. Registration mistakes fail at once, at registration time: a
version mismatch, an empty name, a factory that is not callable, or a second, different
factory under a name already taken.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .errors import ToolkitError

__all__ = [
    "PLUGIN_API_VERSION",
    "PluginFactory",
    "PluginRegistrationError",
    "plugin_factory",
    "register_plugin",
    "registered_plugins",
    "unregister_plugin",
]

#: The plugin contract version this release implements; a factory built for another
#: version is refused at registration.
PLUGIN_API_VERSION = 1

#: ``factory(ctx: OpenContext) -> service object``.
PluginFactory = Callable[[Any], Any]

_lock = threading.Lock()
_factories: dict[str, tuple[str, PluginFactory]] = {}


class PluginRegistrationError(ToolkitError, ValueError):
    """A plugin factory was registered wrongly; a programming error, raised at import."""

    code = "plugin_registration"


def register_plugin(name: str, factory: PluginFactory, *, api_version: int = 1) -> None:
    """Register ``factory`` as the plugin adapter ``name`` (names match ignoring case).

    Registering the same factory again is a no-op, so a module imported twice is fine.
    """
    if api_version != PLUGIN_API_VERSION:
        raise PluginRegistrationError(
            f'plugin "{name}": api_version {api_version!r} is not supported '
            f"(this release implements {PLUGIN_API_VERSION})"
        )
    if not isinstance(name, str) or not name.strip():
        raise PluginRegistrationError("a plugin name must be a non-empty string")
    if not callable(factory):
        raise PluginRegistrationError(f'plugin "{name}": the factory is not callable')
    key = name.strip().lower()
    with _lock:
        existing = _factories.get(key)
        if existing is not None and existing[1] != factory:
            raise PluginRegistrationError(
                f'plugin "{name}" is already registered with another factory '
                f"({_describe(existing[1])})"
            )
        if existing is None:
            _factories[key] = (name.strip(), factory)


def unregister_plugin(name: str) -> None:
    """Forget the plugin ``name`` (for tests and reloads); unknown names are ignored."""
    with _lock:
        _factories.pop(name.strip().lower(), None)


def plugin_factory(name: str) -> PluginFactory | None:
    """Return the factory registered under ``name``, or ``None``."""
    found = _factories.get(name.strip().lower())
    return found[1] if found is not None else None


def registered_plugins() -> tuple[str, ...]:
    """Return the registered plugin names, as registered, sorted."""
    with _lock:
        return tuple(sorted(display for display, _ in _factories.values()))


def _describe(factory: PluginFactory) -> str:
    module = getattr(factory, "__module__", "") or ""
    qualname = getattr(factory, "__qualname__", type(factory).__qualname__)
    return f"{module}.{qualname}" if module else qualname

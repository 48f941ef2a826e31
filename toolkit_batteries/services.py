"""The settings-aware registry: the project's container, built from Django settings.

::

    from toolkit_batteries import services

    services.cache().set("greeting", "hello")
    services.db("primary")
    services.plugin("sms_gateway")

The first call builds a :class:`~toolkit_batteries.core.container.Container` from
``Config.load(settings.TOOLKIT, os.environ)``; importing this module reads no settings and
imports no vendor SDK. The container is rebuilt when ``TOOLKIT`` changes (Django's
``setting_changed``, so ``override_settings(TOOLKIT=...)`` works in tests), and closed at
process exit, by :func:`close` and by :func:`reset`.

Each service accessor takes an optional instance name (``"default"``) and opens the
service on its first call, exactly as the container's accessor of the same name. The
accessors are generated from the catalog; ``services.pyi`` (generated from the same
catalog by :mod:`toolkit_batteries.core.stubs`) tells a type checker what each returns.
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import TYPE_CHECKING, Any

from .core import catalog

if TYPE_CHECKING:
    # Imported on the first accessor call, not here: ``django.setup()`` imports this module
    # (the core app's ``ready()``), and the container pulls in the whole configuration layer.
    from .core.container import Container

__all__ = ["close", "connect_signals", "container", "plugin", "reset", *catalog.SERVICES]

logger = logging.getLogger("toolkit")

_container: Container | None = None
_lock = threading.Lock()
_atexit_registered = False


def container() -> Container:
    """Return the project's container, building it from settings on first use."""
    current = _container
    if current is not None:
        return current
    return _build()


def _build() -> Container:
    global _container, _atexit_registered
    with _lock:
        if _container is None:
            from django.conf import settings

            from .core.config import Config
            from .core.container import Container

            # ``Config.of``: the same ``TOOLKIT`` settings.py derived the slots from is not
            # built a second time.
            config = Config.of(getattr(settings, "TOOLKIT", None) or {})
            _container = Container(config)
            connect_signals()
            if not _atexit_registered:
                atexit.register(_close_at_exit)
                _atexit_registered = True
        return _container


def plugin(name: str, instance: str = "default") -> Any:
    """Return the plugin ``name`` from ``TOOLKIT["plugins"]``, opening it on first call."""
    current = _container
    if current is None:
        current = container()
    return current.plugin(name, instance)


def close(deadline: float | None = None) -> None:
    """Close the project's container; the next accessor call builds a fresh one.

    ``deadline`` is an absolute :func:`time.monotonic` instant. Failures are raised as
    one ``ExceptionGroup``, after everything was attempted.
    """
    old = _take()
    if old is not None:
        old.close(deadline)


def reset() -> None:
    """Drop the container so the next call rebuilds it from settings; close the old one.

    Close failures are logged, not raised: ``reset`` runs from a signal receiver, where an
    exception would break the ``override_settings`` that triggered it.
    """
    old = _take()
    if old is not None:
        _close_logging(old)


def connect_signals() -> None:
    """Rebuild the container whenever the ``TOOLKIT`` setting changes (idempotent)."""
    from django.core.signals import setting_changed

    setting_changed.connect(_on_setting_changed, dispatch_uid="toolkit_batteries.services")


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "TOOLKIT":
        reset()


def _take() -> Container | None:
    global _container
    with _lock:
        old, _container = _container, None
    return old


def _close_logging(old: Container) -> None:
    try:
        old.close()
    except ExceptionGroup as group:
        for error in group.exceptions:
            logger.warning("toolkit: closing the container failed: %s", error)


def _close_at_exit() -> None:
    old = _take()
    if old is not None:
        _close_logging(old)


_ACCESSOR_SOURCE = """\
def {name}(instance="default"):
    current = _container
    if current is None:
        current = container()
    try:
        return current._live_{name}[instance]
    except KeyError:
        return current._open("{name}", instance)
"""


def _install_accessors() -> None:
    """Define one module-level accessor per catalog service.

    Compiled from a fixed template (as the container's own accessors are) so a call is a
    single Python frame: the container's fast path inlined, its slow path delegated. One
    source for all of them, compiled once: this runs at every ``django.setup()``.
    """
    exec("\n".join(_ACCESSOR_SOURCE.format(name=name) for name in catalog.SERVICES), globals())
    for spec in catalog.SERVICES.values():
        globals()[spec.name].__doc__ = spec.accessor_doc


_install_accessors()

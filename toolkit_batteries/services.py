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
service on its first call, exactly as the container's accessor of the same name.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from .core import catalog
from .core.container import Container

__all__ = ["close", "connect_signals", "container", "plugin", "reset", *catalog.SERVICES]

logger = logging.getLogger("toolkit")

_container: Container | None = None
_lock = threading.Lock()
_atexit_registered = False

if TYPE_CHECKING:  # the accessors below are generated from the catalog at import time
    # Each landed battery's public class, so a type checker and an editor see what an
    # accessor returns; imported for type checking only, so importing this module stays
    # light. Batteries still to be built return ``Any`` until they land.
    from .ai import AI
    from .analytics import Analytics
    from .auth import Authenticator
    from .billing import Billing
    from .cache import Cache
    from .cdn import CDN
    from .crypto import Crypto
    from .db import Database
    from .document import Document
    from .eventbus import EventBus
    from .flag import Flag
    from .geo import Geo
    from .i18n import I18n
    from .idempotency import Idempotency
    from .lock import Lock
    from .log import Logger
    from .mailer import Mailer
    from .media import Media
    from .notification import Notification
    from .observability import Observability
    from .outbox import Outbox
    from .password import PasswordHasher
    from .payment import Payment
    from .permission import Authorizer
    from .queue import Queue
    from .ratelimit import RateLimiter
    from .resilience import Policy
    from .router import Router
    from .scheduler import Scheduler
    from .search import Search
    from .secrets import Secrets
    from .session import SessionStore
    from .storage import Storage
    from .tenant import Tenant
    from .vectorstore import VectorStore
    from .webhook import Webhook
    from .workflow import Workflow

    def ai(instance: str = "default") -> AI: ...
    def analytics(instance: str = "default") -> Analytics: ...
    def auth(instance: str = "default") -> Authenticator: ...
    def billing(instance: str = "default") -> Billing: ...
    def cache(instance: str = "default") -> Cache: ...
    def cdn(instance: str = "default") -> CDN: ...
    def crypto(instance: str = "default") -> Crypto: ...
    def db(instance: str = "default") -> Database: ...
    def document(instance: str = "default") -> Document: ...
    def eventbus(instance: str = "default") -> EventBus: ...
    def flag(instance: str = "default") -> Flag: ...
    def geo(instance: str = "default") -> Geo: ...
    def i18n(instance: str = "default") -> I18n: ...
    def idempotency(instance: str = "default") -> Idempotency: ...
    def lock(instance: str = "default") -> Lock: ...
    def log(instance: str = "default") -> Logger: ...
    def mailer(instance: str = "default") -> Mailer: ...
    def media(instance: str = "default") -> Media: ...
    def notification(instance: str = "default") -> Notification: ...
    def observability(instance: str = "default") -> Observability: ...
    def outbox(instance: str = "default") -> Outbox: ...
    def password(instance: str = "default") -> PasswordHasher: ...
    def payment(instance: str = "default") -> Payment: ...
    def permission(instance: str = "default") -> Authorizer: ...
    def queue(instance: str = "default") -> Queue: ...
    def ratelimit(instance: str = "default") -> RateLimiter: ...
    def resilience(instance: str = "default") -> Policy: ...
    def router(instance: str = "default") -> Router: ...
    def scheduler(instance: str = "default") -> Scheduler: ...
    def search(instance: str = "default") -> Search: ...
    def secrets(instance: str = "default") -> Secrets: ...
    def session(instance: str = "default") -> SessionStore: ...
    def storage(instance: str = "default") -> Storage: ...
    def tenant(instance: str = "default") -> Tenant: ...
    def vectorstore(instance: str = "default") -> VectorStore: ...
    def webhook(instance: str = "default") -> Webhook: ...
    def workflow(instance: str = "default") -> Workflow: ...


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

            config = Config.load(getattr(settings, "TOOLKIT", None) or {}, os.environ)
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
    single Python frame: the container's fast path inlined, its slow path delegated.
    """
    for spec in catalog.SERVICES.values():
        exec(_ACCESSOR_SOURCE.format(name=spec.name), globals())
        globals()[spec.name].__doc__ = getattr(Container, spec.name).__doc__


_install_accessors()

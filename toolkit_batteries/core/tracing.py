"""Spans around battery operations that cross a process boundary.

Every battery call that leaves the process (a Redis round trip, an SQL statement on a
server, an S3 request, an SMTP conversation, an outbound HTTP call) runs inside
``operation(service, instance, op)``, which opens the span ``<service>.<op>`` with the
attributes ``toolkit.service`` and ``toolkit.instance`` on the process's tracer: the
``default`` instance of the observability battery. Adapters declare their remote
operations once with the :func:`traced` class decorator instead of wrapping each call.

Why a process-wide tracer rather than ``ctx.container.observability()`` in each adapter's
``open``: the Django-slot batteries (cache, storage, mailer) are built by Django's
handlers, which know nothing of a container, and a span must reach the same tracer
whoever built the object. The tracer is found once, lazily: when the default
observability instance opens it becomes the tracer; when ``TOOLKIT`` configures an
``observability`` entry and nothing opened it yet, the first traced operation opens it.
With no tracer, :func:`operation` returns one shared do-nothing context manager, so an
untraced process pays a global lookup per call. Telemetry never breaks the operation it
observes: a tracer that fails to open is logged once and left off.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

__all__ = ["activate", "active", "deactivate", "operation", "reset", "traced"]

logger = logging.getLogger("toolkit.observability")

_NULL: AbstractContextManager[Any] = nullcontext()

#: The observability instance spans go to, once found (``None``: none, or not looked).
_tracer: Any = None
#: Whether the lazy lookup already ran (it runs once per process, or after :func:`reset`).
_looked = False

T = TypeVar("T", bound=type)


def activate(observability: Any) -> None:
    """Make ``observability`` the process's tracer (its ``open`` calls this for
    ``default``)."""
    global _tracer, _looked
    _tracer, _looked = observability, True


def deactivate(observability: Any) -> None:
    """Stop tracing into ``observability`` if it is the tracer (its ``close`` calls this)."""
    global _tracer
    if _tracer is observability:
        _tracer = None


def reset() -> None:
    """Forget the tracer and look again at the next operation (tests use this)."""
    global _tracer, _looked
    _tracer, _looked = None, False


def active() -> Any:
    """Return the tracer in use, looking it up first if nobody has yet."""
    if not _looked:
        _look_up()
    return _tracer


def operation(
    service: str, instance: str, op: str, **attributes: Any
) -> AbstractContextManager[Any]:
    """Return the context manager of one remote operation's span (a no-op untraced)."""
    tracer = _tracer if _looked else active()
    if tracer is None:
        return _NULL
    return tracer.operation(service, instance, op, **attributes)


def traced(*methods: str) -> Callable[[T], T]:
    """Class decorator: run each named method (sync or ``async``) inside
    ``operation(cls.service_name, self.instance, <method name>)``.

    Only the named methods are wrapped, on the class that names them, so an adapter
    lists exactly its calls that leave the process. ``__traced__`` records them for the
    tree test that checks every remote adapter declares some.
    """

    def decorate(cls: T) -> T:
        for name in methods:
            method = getattr(cls, name, None)
            if method is None or not callable(method):
                raise TypeError(f"{cls.__name__} has no method {name!r} to trace")
            setattr(cls, name, _wrap(cls.service_name, name.lstrip("_"), method))
        cls.__traced__ = tuple(getattr(cls, "__traced__", ())) + tuple(methods)
        return cls

    return decorate


def _wrap(service: str, op: str, method: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def traced_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            tracer = _tracer if _looked else active()
            if tracer is None:
                return await method(self, *args, **kwargs)
            with tracer.operation(service, getattr(self, "instance", "default"), op):
                return await method(self, *args, **kwargs)

        return traced_async

    @functools.wraps(method)
    def traced_sync(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracer = _tracer if _looked else active()
        if tracer is None:
            return method(self, *args, **kwargs)
        with tracer.operation(service, getattr(self, "instance", "default"), op):
            return method(self, *args, **kwargs)

    return traced_sync


def _look_up() -> None:
    """Open the default observability instance when ``TOOLKIT`` configures one."""
    global _looked
    _looked = True  # first, so that the opening's own operations do not recurse
    try:
        from django.conf import settings

        if not settings.configured or "observability" not in (
            getattr(settings, "TOOLKIT", None) or {}
        ):
            return
        from toolkit_batteries import services

        services.observability()  # its open calls activate()
    except Exception as exc:  # telemetry must not break the operation it observes
        logger.warning("observability: battery tracing is off (%s)", type(exc).__name__)

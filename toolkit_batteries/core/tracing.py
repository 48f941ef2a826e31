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
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

__all__ = [
    "activate",
    "active",
    "deactivate",
    "operation",
    "reset",
    "set_recorder",
    "traced",
]

logger = logging.getLogger("toolkit.observability")

_NULL: AbstractContextManager[Any] = nullcontext()

#: The observability instance spans go to, once found (``None``: none, or not looked).
_tracer: Any = None
#: Whether the lazy lookup already ran (it runs once per process, or after :func:`reset`).
_looked = False

T = TypeVar("T", bound=type)

#: Called as ``recorder(service, instance, op, seconds, failed)`` after every operation
#: (the ``/metrics`` view's latency and error series); ``None``: nothing is timed.
_recorder: Callable[[str, str, str, float, bool], None] | None = None


def set_recorder(recorder: Callable[[str, str, str, float, bool], None] | None) -> None:
    """Time every battery operation into ``recorder`` (``None`` stops it)."""
    global _recorder
    _recorder = recorder


class _Timed:
    """Time one operation around its span (or around nothing when untraced)."""

    __slots__ = ("inner", "instance", "op", "recorder", "service", "started")

    def __init__(
        self,
        recorder: Callable[[str, str, str, float, bool], None],
        service: str,
        instance: str,
        op: str,
        inner: AbstractContextManager[Any],
    ) -> None:
        self.recorder, self.service, self.instance, self.op = recorder, service, instance, op
        self.inner = inner
        self.started = 0.0

    def __enter__(self) -> Any:
        self.started = time.perf_counter()
        return self.inner.__enter__()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        try:
            return self.inner.__exit__(exc_type, exc, tb)
        finally:
            elapsed = time.perf_counter() - self.started
            try:
                self.recorder(self.service, self.instance, self.op, elapsed, exc_type is not None)
            except Exception:  # telemetry must not break the operation it observes
                logger.debug("observability: recording %s.%s failed", self.service, self.op)


def _span(service: str, instance: str, op: str, **attributes: Any) -> AbstractContextManager[Any]:
    """Return the operation's span, timed when a recorder is set."""
    tracer = _tracer if _looked else active()
    inner = _NULL if tracer is None else tracer.operation(service, instance, op, **attributes)
    recorder = _recorder
    if recorder is None:
        return inner
    return _Timed(recorder, service, instance, op, inner)


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
    return _span(service, instance, op, **attributes)


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
            if tracer is None and _recorder is None:
                return await method(self, *args, **kwargs)
            with _span(service, getattr(self, "instance", "default"), op):
                return await method(self, *args, **kwargs)

        return traced_async

    @functools.wraps(method)
    def traced_sync(self: Any, *args: Any, **kwargs: Any) -> Any:
        tracer = _tracer if _looked else active()
        if tracer is None and _recorder is None:
            return method(self, *args, **kwargs)
        with _span(service, getattr(self, "instance", "default"), op):
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

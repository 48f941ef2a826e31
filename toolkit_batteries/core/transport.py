"""One translation of "the server cannot be reached" per transport.

An adapter talks to its server through one transport (a key-value server, a SQL database,
an AWS-style HTTP API); a lost connection or a timeout there must reach the caller as
:class:`~toolkit_batteries.core.errors.ServiceUnavailableError` naming the service and
instance, with the driver's exception *class* only: a driver's message names hosts, user
names and sometimes a whole URL with its password. Each transport's catch lives here once,
as a reusable context manager an adapter builds at open and wraps its calls in::

    self._unreachable = kv_unreachable("lock", instance)
    ...
    with self._unreachable:
        return self._client.set(key, token, nx=True, px=ms)

A translator holds no per-call state, so one instance serves every thread; entering it
costs one attribute lookup (no generator, unlike ``contextlib.contextmanager``), which
matters on a cache's hot path. Errors that are not about reaching the server (a refused
command, a constraint violation) pass through unchanged for the adapter to handle.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import TracebackType

from .errors import ServiceUnavailableError

__all__ = [
    "KV_REASON",
    "Unreachable",
    "aws_unreachable",
    "kv_errors",
    "kv_unreachable",
    "sql_unreachable",
]

#: The kvserver adapters' usual reason; ``{error}`` is the driver's exception class.
KV_REASON = "cannot reach the key-value server ({error})"


class Unreachable:
    """Turn ``errors`` raised inside the block into :class:`ServiceUnavailableError`.

    ``reason`` may name ``{error}`` (the exception's class name, never its message).
    ``keep_cause`` chains the driver's exception as ``__cause__`` (for adapters whose
    callers log the cause); by default the chain is cut, so a traceback printed with the
    error shows no driver message either. ``on_error`` runs first (dropping a dead pooled
    connection so the next call reconnects); its own failure is ignored.
    """

    __slots__ = ("_errors", "_on_error", "instance", "keep_cause", "reason", "service")

    def __init__(
        self,
        service: str,
        instance: str,
        errors: tuple[type[BaseException], ...],
        reason: str,
        *,
        keep_cause: bool = False,
        on_error: Callable[[], None] | None = None,
    ) -> None:
        self.service = service
        self.instance = instance
        self._errors = errors
        self.reason = reason
        self.keep_cause = keep_cause
        self._on_error = on_error

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if exc is None or not isinstance(exc, self._errors):
            return False
        raise self.error(exc) from (exc if self.keep_cause else None)

    def error(self, exc: BaseException) -> ServiceUnavailableError:
        """Return the translated error for ``exc`` (after running ``on_error``)."""
        if self._on_error is not None:
            # A best effort: the caller reports the original failure.
            with contextlib.suppress(Exception):
                self._on_error()
        return ServiceUnavailableError(
            self.service, self.reason.format(error=type(exc).__name__), instance=self.instance
        )

    def __repr__(self) -> str:
        return f"<Unreachable {self.service}.{self.instance}>"


def kv_errors() -> tuple[type[BaseException], ...]:
    """Return redis-py's "cannot reach the server" errors (imported here, lazily)."""
    from redis import exceptions

    return (exceptions.ConnectionError, exceptions.TimeoutError)


def kv_unreachable(
    service: str, instance: str, reason: str = KV_REASON, *, keep_cause: bool = False
) -> Unreachable:
    """Return the translator of a ``kvserver`` adapter (redis connection and timeout errors).

    ``redis.exceptions.ResponseError`` and other refusals pass through: the server
    answered, so it is not unavailable.
    """
    return Unreachable(service, instance, kv_errors(), reason, keep_cause=keep_cause)


def sql_unreachable(
    service: str,
    instance: str,
    doing: str = "use the database",
    *,
    on_error: Callable[[], None] | None = None,
) -> Unreachable:
    """Return the translator of a SQL adapter: Django's ``OperationalError``/``InterfaceError``.

    Those cover a server gone, a refused connection and a database locked past its
    timeout, on PostgreSQL and SQLite alike (Django wraps psycopg's and sqlite3's).
    The reason reads ``cannot <doing> (<error class>)``.
    """
    from django.db import InterfaceError, OperationalError

    return Unreachable(
        service,
        instance,
        (OperationalError, InterfaceError),
        f"cannot {doing} ({{error}})",
        on_error=on_error,
    )


def aws_unreachable(service: str, instance: str, what: str) -> Unreachable:
    """Return the translator of a botocore client: connection and read/connect timeouts.

    ``what`` names the API (``"the SQS endpoint"``). A ``ClientError`` (the service
    answered with an error) passes through for the adapter to map.
    """
    from botocore import exceptions

    errors = (
        exceptions.EndpointConnectionError,
        exceptions.ConnectionClosedError,
        exceptions.ConnectTimeoutError,
        exceptions.ReadTimeoutError,
    )
    return Unreachable(service, instance, errors, f"cannot reach {what} ({{error}})")

"""PostgreSQL pools: psycopg 3 with ``psycopg_pool.ConnectionPool``.

Settings map onto the pool as ``max_size`` = ``max_conns`` (0 means 10), ``min_size`` =
``min_conns`` (kept warm by the pool's workers), ``max_lifetime`` and ``max_idle`` from
the two durations (0 keeps psycopg_pool's 1 h and 10 min).

Opening connects once, directly and with a short timeout, before the pool starts: a
wrong host, port, database or password then fails the open at once with a
:class:`ServiceUnavailableError` that names the service and the kind of failure, never
the DSN, instead of a pool that retries in the background for minutes. psycopg is
imported only here; without it the open fails with :class:`MissingExtraError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError, ServiceUnavailableError
from toolkit_batteries.core.pools import SQLPoolSettings, SQLTarget

__all__ = ["CONNECT_TIMEOUT", "PostgresPool", "describe_failure"]

#: Seconds the opening check waits for the server.
CONNECT_TIMEOUT = 5
#: Seconds a borrower waits for a free connection when the pool is exhausted.
ACQUIRE_TIMEOUT = 30.0

# libpq messages -> a reason without host, port, user or database names.
_FAILURES = (
    ("does not exist", "the database or role does not exist"),
    ("password authentication failed", "authentication failed"),
    ("no password supplied", "authentication failed"),
    ("no pg_hba.conf entry", "the server refused this client (pg_hba.conf)"),
    ("connection refused", "cannot reach the server (connection refused)"),
    ("timeout expired", "cannot reach the server (timed out)"),
    ("could not translate host name", "cannot resolve the server's host name"),
    ("name or service not known", "cannot resolve the server's host name"),
    ("no such file or directory", "cannot reach the server's socket"),
    ("too many clients", "the server has too many connections"),
    ("the database system is starting up", "the server is starting up"),
    ("the database system is shutting down", "the server is shutting down"),
    ("ssl", "the TLS negotiation failed"),
    ("invalid connection option", "the DSN has an invalid connection option"),
    ("invalid dsn", "the DSN is malformed"),
    ('missing "="', "the DSN is malformed"),
    ("invalid uri", "the DSN is malformed"),
    ("invalid port", "the DSN has an invalid port"),
    ("invalid integer value", "the DSN has an invalid number"),
)


def describe_failure(exc: BaseException) -> str:
    """Return why a connection failed, in words that carry no part of the DSN."""
    message = str(exc).lower()
    for needle, reason in _FAILURES:
        if needle in message:
            return reason
    return f"cannot connect ({type(exc).__name__})"


def _import_psycopg(service: str) -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        module = "psycopg_pool" if "pool" in (exc.name or "") else "psycopg"
        raise MissingExtraError(service, "sqlserver", "sqlserver", module) from None
    return psycopg, psycopg_pool


class PostgresPool:
    """A psycopg_pool ``ConnectionPool`` behind the registry's :class:`SQLPool` protocol."""

    dialect = "postgresql"

    def __init__(
        self,
        target: SQLTarget,
        settings: SQLPoolSettings,
        pool: Any,
        *,
        service: str = "db",
        instance: str = "default",
    ) -> None:
        self.target = target
        self.settings = settings
        self.pool = pool
        self.service = service
        self.instance = instance

    @classmethod
    def open(
        cls,
        target: SQLTarget,
        settings: SQLPoolSettings,
        *,
        service: str = "db",
        instance: str = "default",
    ) -> PostgresPool:
        """Check the server answers, then start the pool."""
        from . import DEFAULT_MAX_CONNS

        psycopg, psycopg_pool = _import_psycopg(service)
        conninfo = target.location
        try:
            probe = psycopg.connect(conninfo, connect_timeout=CONNECT_TIMEOUT)
        except (psycopg.Error, ValueError) as exc:
            raise ServiceUnavailableError(
                service, describe_failure(exc), instance=instance
            ) from None
        probe.close()

        min_size = max(0, settings.min_conns)
        max_size = max(settings.max_conns or DEFAULT_MAX_CONNS, min_size, 1)
        extra: dict[str, float] = {}
        if settings.max_conn_lifetime.total_seconds() > 0:
            extra["max_lifetime"] = settings.max_conn_lifetime.total_seconds()
        if settings.max_conn_idle_time.total_seconds() > 0:
            extra["max_idle"] = settings.max_conn_idle_time.total_seconds()
        pool = psycopg_pool.ConnectionPool(
            conninfo,
            min_size=min_size,
            max_size=max_size,
            open=False,
            name=f"toolkit:{service}.{instance}",
            timeout=ACQUIRE_TIMEOUT,
            kwargs={"connect_timeout": CONNECT_TIMEOUT},
            **extra,
        )
        try:
            pool.open(wait=min_size > 0, timeout=CONNECT_TIMEOUT * 2)
        except psycopg_pool.PoolTimeout:
            pool.close(timeout=0)
            raise ServiceUnavailableError(
                service, "the pool could not open its minimum connections", instance=instance
            ) from None
        return cls(target, settings, pool, service=service, instance=instance)

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[Any]:
        """Lend a connection; commit on a clean exit, roll back when the block raised."""
        import psycopg_pool

        try:
            cm = self.pool.connection(timeout=timeout)
            conn = cm.__enter__()
        except psycopg_pool.PoolTimeout:
            raise ServiceUnavailableError(
                self.service, "no pooled connection became free in time", instance=self.instance
            ) from None
        except psycopg_pool.PoolClosed:
            raise ServiceUnavailableError(
                self.service, "the SQL pool is closed", instance=self.instance
            ) from None
        try:
            yield conn
        except BaseException as exc:
            if not cm.__exit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            cm.__exit__(None, None, None)

    @property
    def driver(self) -> Any:
        """Return the DB-API module (psycopg), whose exceptions borrowers catch."""
        import psycopg

        return psycopg

    @property
    def size(self) -> int:
        """Return the number of open connections, idle and lent."""
        return int(self.pool.get_stats().get("pool_size", 0))

    def close(self, timeout: float | None = None) -> None:
        """Close the pool; connections still lent close when they come back."""
        self.pool.close(timeout=5.0 if timeout is None else timeout)

    def __repr__(self) -> str:
        return f"<PostgresPool {self.target.describe()}>"

"""A small thread-safe pool of ``sqlite3`` connections.

SQLite allows one writer at a time, so the pool mostly saves the cost of reopening the
file and re-applying the pragmas. Every connection gets:

* ``check_same_thread=False``: a connection is lent to one thread at a time, but the
  thread that returns it is not always the one that opened it;
* ``journal_mode=WAL`` and ``synchronous=NORMAL`` on files, so readers never block the
  writer;
* ``busy_timeout`` (5 s), so a writer waits for the lock instead of failing at once;
* ``foreign_keys=ON``, which SQLite leaves off by default.

``max_conns`` caps the open connections (0 means 10); ``min_conns`` is the idle target
(connections kept open when returned; 0 means 2); ``max_conn_lifetime`` and
``max_conn_idle_time`` retire old connections when they are next borrowed or returned.

``:memory:`` is different: each connection would be its own empty database, so the pool
holds exactly one connection and lends it to one thread at a time.

Leaving a ``connection()`` block commits what is pending, or rolls back when the block
raised: the same contract as psycopg's pooled connections.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.pools import SQLPoolSettings, SQLTarget

__all__ = ["BUSY_TIMEOUT", "DEFAULT_IDLE", "SQLitePool"]

#: Seconds a writer waits for the database lock before failing ("database is locked").
BUSY_TIMEOUT = 5.0
#: Idle connections kept when ``min_conns`` is 0.
DEFAULT_IDLE = 2
#: Seconds a borrower waits for a free connection when the pool is exhausted.
ACQUIRE_TIMEOUT = 30.0


@dataclass(slots=True)
class _Slot:
    conn: sqlite3.Connection
    created: float
    returned: float


class SQLitePool:
    """Connections to one SQLite database file, or the single ``:memory:`` connection."""

    dialect = "sqlite"

    def __init__(
        self,
        target: SQLTarget,
        settings: SQLPoolSettings,
        *,
        service: str = "db",
        instance: str = "default",
    ) -> None:
        from . import DEFAULT_MAX_CONNS

        self.target = target
        self.settings = settings
        self.service = service
        self.instance = instance
        self.memory = target.memory
        self.max_size = 1 if self.memory else (settings.max_conns or DEFAULT_MAX_CONNS)
        self.max_idle = 1 if self.memory else max(1, settings.min_conns or DEFAULT_IDLE)
        self.max_lifetime = settings.max_conn_lifetime.total_seconds()
        self.max_idle_time = settings.max_conn_idle_time.total_seconds()
        self._cond = threading.Condition()
        self._idle: deque[_Slot] = deque()
        self._lent: dict[int, _Slot] = {}
        self._size = 0
        self._closed = False
        # :memory: lends its one connection re-entrantly to the thread holding it.
        self._memory_lock = threading.RLock()
        self._memory_depth = 0
        self._memory_slot: _Slot | None = None

    @classmethod
    def open(
        cls,
        target: SQLTarget,
        settings: SQLPoolSettings,
        *,
        service: str = "db",
        instance: str = "default",
    ) -> SQLitePool:
        """Open the pool and its first connection, so a bad path fails now, not later."""
        pool = cls(target, settings, service=service, instance=instance)
        slot = pool._connect()
        if pool.memory:
            pool._memory_slot = slot
        else:
            pool._idle.append(slot)
        pool._size = 1
        return pool

    # ------------------------------------------------------------------ connections

    def _connect(self) -> _Slot:
        try:
            if self.memory:
                conn = sqlite3.connect(MEMORY_NAME, check_same_thread=False, timeout=BUSY_TIMEOUT)
            elif self.target.query:
                uri = f"file:{quote(self.target.location)}?{self.target.query}"
                conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=BUSY_TIMEOUT)
            else:
                conn = sqlite3.connect(
                    self.target.location, check_same_thread=False, timeout=BUSY_TIMEOUT
                )
        except sqlite3.Error:
            raise ServiceUnavailableError(
                self.service, "cannot open the SQLite database file", instance=self.instance
            ) from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            if not self.memory:
                try:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute("PRAGMA synchronous = NORMAL")
                except sqlite3.OperationalError:  # read-only databases keep their mode
                    pass
        except sqlite3.Error:
            conn.close()
            raise ServiceUnavailableError(
                self.service, "cannot use the SQLite database file", instance=self.instance
            ) from None
        now = time.monotonic()
        return _Slot(conn, now, now)

    def _expired(self, slot: _Slot, now: float) -> bool:
        if self.max_lifetime > 0 and now - slot.created >= self.max_lifetime:
            return True
        return self.max_idle_time > 0 and now - slot.returned >= self.max_idle_time

    def _acquire(self, timeout: float) -> _Slot:
        deadline = time.monotonic() + timeout
        retire: list[_Slot] = []
        try:
            with self._cond:
                while True:
                    if self._closed:
                        raise ServiceUnavailableError(
                            self.service, "the SQL pool is closed", instance=self.instance
                        )
                    now = time.monotonic()
                    while self._idle:
                        slot = self._idle.pop()  # most recently returned: warmest cache
                        if self._expired(slot, now):
                            retire.append(slot)
                            self._size -= 1
                            continue
                        self._lent[id(slot.conn)] = slot
                        return slot
                    if self._size < self.max_size:
                        self._size += 1
                        break
                    remaining = deadline - now
                    if remaining <= 0:
                        raise ServiceUnavailableError(
                            self.service,
                            f"no pooled connection became free within {timeout:g}s",
                            instance=self.instance,
                        )
                    self._cond.wait(remaining)
        finally:
            for slot in retire:
                slot.conn.close()
        try:
            slot = self._connect()
        except BaseException:
            with self._cond:
                self._size -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._lent[id(slot.conn)] = slot
        return slot

    def _release(self, slot: _Slot, *, broken: bool) -> None:
        now = time.monotonic()
        with self._cond:
            self._lent.pop(id(slot.conn), None)
            keep = (
                not broken
                and not self._closed
                and len(self._idle) < self.max_idle
                and not (self.max_lifetime > 0 and now - slot.created >= self.max_lifetime)
            )
            if keep:
                slot.returned = now
                self._idle.append(slot)
            else:
                self._size -= 1
            self._cond.notify()
        if not keep:
            slot.conn.close()

    @staticmethod
    def _finish(conn: sqlite3.Connection, failed: bool) -> bool:
        """Commit or roll back what the borrower left open; return False if unusable."""
        try:
            if failed:
                conn.rollback()
            elif conn.in_transaction:
                conn.commit()
            return True
        except sqlite3.Error:
            if not failed:
                raise
            return False

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[sqlite3.Connection]:
        """Lend a connection; commit on a clean exit, roll back when the block raised."""
        if self.memory:
            with self._memory_connection() as conn:
                yield conn
            return
        slot = self._acquire(ACQUIRE_TIMEOUT if timeout is None else timeout)
        usable = True
        try:
            yield slot.conn
        except BaseException:
            usable = self._finish(slot.conn, failed=True)
            raise
        else:
            try:
                self._finish(slot.conn, failed=False)
            except BaseException:
                usable = self._finish(slot.conn, failed=True)
                raise
        finally:
            self._release(slot, broken=not usable)

    @contextmanager
    def _memory_connection(self) -> Iterator[sqlite3.Connection]:
        with self._memory_lock:
            if self._closed or self._memory_slot is None:
                raise ServiceUnavailableError(
                    self.service, "the SQL pool is closed", instance=self.instance
                )
            conn = self._memory_slot.conn
            self._memory_depth += 1
            try:
                yield conn
            except BaseException:
                if self._memory_depth == 1:
                    self._finish(conn, failed=True)
                raise
            else:
                if self._memory_depth == 1:
                    self._finish(conn, failed=False)
            finally:
                self._memory_depth -= 1

    # ------------------------------------------------------------------ lifecycle

    @property
    def driver(self) -> Any:
        """Return the DB-API module (sqlite3), whose exceptions borrowers catch."""
        return sqlite3

    @property
    def size(self) -> int:
        """Return the number of open connections, idle and lent."""
        with self._cond:
            return self._size

    @property
    def idle(self) -> int:
        """Return the number of idle connections."""
        with self._cond:
            return len(self._idle)

    def close(self, timeout: float | None = None) -> None:
        """Close idle connections now and lent ones when they come back; refuse new loans."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            idle = list(self._idle)
            self._idle.clear()
            self._size -= len(idle)
            self._cond.notify_all()
        for slot in idle:
            slot.conn.close()
        if self.memory:
            with self._memory_lock:
                if self._memory_slot is not None:
                    self._memory_slot.conn.close()
                    self._memory_slot = None

    def __repr__(self) -> str:
        return f"<SQLitePool {self.target.describe()} size={self._size}>"


#: The name sqlite3 gives a private in-memory database.
MEMORY_NAME = ":memory:"

"""The SQLite pool: pragmas, caps, idle target, lifetimes, and the single :memory: connection."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.pools import SQLPoolSettings, parse_sql_target
from toolkit_batteries.db.pools import open_sql_pool


def pool_for(path, **settings):
    return open_sql_pool(parse_sql_target(str(path)), SQLPoolSettings(**settings))


def test_file_connections_get_wal_busy_timeout_and_foreign_keys(tmp_path):
    pool = pool_for(tmp_path / "p.db")
    try:
        with pool.connection() as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
            assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            conn.execute("CREATE TABLE parent (id integer PRIMARY KEY)")
            conn.execute("CREATE TABLE child (p integer REFERENCES parent(id))")
        with pytest.raises(Exception, match="FOREIGN KEY"), pool.connection() as conn:
            conn.execute("INSERT INTO child VALUES (1)")
    finally:
        pool.close()


def test_memory_keeps_one_connection_and_serialises_threads():
    pool = open_sql_pool(parse_sql_target(":memory:"), SQLPoolSettings(max_conns=5))
    inside, overlap = [0], []
    lock = threading.Lock()

    def use() -> None:
        with pool.connection() as conn:
            with lock:
                inside[0] += 1
                overlap.append(inside[0])
            conn.execute("SELECT 1")
            time.sleep(0.01)
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=use) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert max(overlap) == 1
    with pool.connection() as a, pool.connection() as b:  # re-entrant in one thread
        assert a is b
    pool.close()


def test_max_conns_caps_the_pool_and_waiters_time_out(tmp_path):
    pool = pool_for(tmp_path / "cap.db", max_conns=2)
    try:
        with pool.connection(), pool.connection():
            assert pool.size == 2
            started = time.monotonic()
            with (
                pytest.raises(ServiceUnavailableError, match="no pooled connection"),
                pool.connection(timeout=0.2),
            ):
                pass
            assert time.monotonic() - started >= 0.2
        with pool.connection():  # a returned connection is lent again
            assert pool.size == 2
    finally:
        pool.close()


def test_min_conns_is_the_idle_target(tmp_path):
    pool = pool_for(tmp_path / "idle.db", max_conns=6, min_conns=3)
    try:
        with (
            pool.connection(),
            pool.connection(),
            pool.connection(),
            pool.connection(),
            pool.connection(),
        ):
            assert pool.size == 5
        assert pool.idle == 3
        assert pool.size == 3
    finally:
        pool.close()


def test_lifetime_and_idle_time_retire_connections(tmp_path):
    pool = pool_for(tmp_path / "life.db", max_conn_idle_time=timedelta(milliseconds=50))
    try:
        with pool.connection() as first:
            pass
        with pool.connection() as again:
            assert again is first
        time.sleep(0.08)
        with pool.connection() as fresh:
            assert fresh is not first
    finally:
        pool.close()
    aged = pool_for(tmp_path / "life2.db", max_conn_lifetime=timedelta(milliseconds=50))
    try:
        with aged.connection() as first:
            time.sleep(0.08)
        with aged.connection() as fresh:
            assert fresh is not first
    finally:
        aged.close()


def test_closed_pool_refuses_and_closes_returned_connections(tmp_path):
    pool = pool_for(tmp_path / "closed.db")
    with pool.connection() as conn:
        pool.close()
        conn.execute("SELECT 1")  # a lent connection finishes its work
    assert pool.size == 0
    with pytest.raises(ServiceUnavailableError, match="closed"), pool.connection():
        pass


def test_uri_parameters_are_applied(tmp_path):
    path = tmp_path / "ro.db"
    writable = pool_for(path)
    with writable.connection() as conn:
        conn.execute("CREATE TABLE t (x)")
    writable.close()
    readonly = open_sql_pool(parse_sql_target(f"file:{path}?mode=ro"), SQLPoolSettings())
    try:
        with pytest.raises(Exception, match="readonly"), readonly.connection() as conn:
            conn.execute("INSERT INTO t VALUES (1)")
    finally:
        readonly.close()

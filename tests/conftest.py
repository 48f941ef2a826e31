"""Shared fixtures: the real PostgreSQL and Redis servers, and a clean container.

Tests of ``sqlserver`` and ``kvserver`` adapters run against the real servers on this
machine and *fail* (never skip) when a server is unreachable: ``make test`` starts them
first, so an unreachable server is a real fault worth seeing.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from hypothesis import settings as hypothesis_settings

from tests.support.batteries import BatteryOpener
from tests.support.processes import serving
from tests.support.redis_server import PrivateRedis, drop_redis_prefix

# The suite is a gate, so Hypothesis runs the same examples every time (as its CI profile
# does); set TOOLKIT_FUZZ_RANDOM=1 to explore new random inputs locally.
if not os.environ.get("TOOLKIT_FUZZ_RANDOM"):
    hypothesis_settings.register_profile("toolkit", derandomize=True, database=None)
    hypothesis_settings.load_profile("toolkit")


def _reachable(url: str, default_port: int, product: str) -> str:
    """Return ``url`` when its server answers; fail the test (never skip it) when not."""
    parts = urlsplit(url)
    try:
        with socket.create_connection(
            (parts.hostname or "127.0.0.1", parts.port or default_port), 2
        ):
            return url
    except OSError:
        pytest.fail(f"{product} is unreachable at 127.0.0.1:{default_port}; run `make services`")


@pytest.fixture(autouse=True)
def _database_access(django_db_blocker):
    """Let every test reach its databases: batteries write through Django's connections.

    pytest-django blocks database access outside tests marked ``django_db``; the
    batteries' own databases (a migrated PostgreSQL database, SQLite files) are the
    real services these tests exercise, so the block is lifted for all of them.
    """
    with django_db_blocker.unblock():
        yield


@pytest.fixture(scope="session")
def django_db_setup(
    django_test_environment: None, django_db_blocker: Any, django_db_modify_db_settings: None
) -> Iterator[None]:
    """Set up Django's ``default`` test database for every session, whatever is collected.

    pytest-django sets up only the databases the collected ``django_db`` tests name, so a
    test that writes through the autouse unblock (a superuser for a real admin login, with
    no ``django_db`` mark because that mark forbids the aliases batteries register at run
    time) would find no tables when run alone. ``default`` is the one alias the settings
    declare.
    """
    del django_test_environment, django_db_modify_db_settings
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        config = setup_databases(
            verbosity=0, interactive=False, aliases={"default"}, serialized_aliases=set()
        )
    yield
    with django_db_blocker.unblock():
        teardown_databases(config, verbosity=0)


@pytest.fixture(scope="session", autouse=True)
def _test_databases_first(django_db_setup: None) -> None:
    """Set up the test databases before any test runs.

    Batteries register a ``DATABASES`` alias for a ``dsn`` at run time, and a test of an
    unreachable server (``127.0.0.1:1``) leaves one behind; setting up after such a test
    would try the dead server. Under ``pytest -n`` the order of files per worker differs
    from a serial run, so the setup is done first, always.
    """
    del django_db_setup


def migrate_database(entry: dict) -> str:
    """Apply every installed app's migrations to the database ``entry``; return its alias."""
    from django.core.management import call_command
    from django.db import connections

    from toolkit_batteries.core.slots import slot_alias

    alias = slot_alias(connections, entry, preferred="default", prefix="toolkit_db")
    call_command("migrate", database=alias, verbosity=0, interactive=False)
    connections[alias].close()
    return alias


@pytest.fixture(scope="session")
def postgres_server_dsn() -> str:
    """Return the DSN of the real PostgreSQL server's ``test`` database (not migrated)."""
    return _reachable(settings.TEST_POSTGRES_DSN, 5432, "PostgreSQL")


@pytest.fixture(scope="session")
def postgres_dsn(postgres_server_dsn: str, django_db_blocker) -> Iterator[str]:
    """Return the DSN of a fresh database on the real PostgreSQL server, fully migrated.

    Each test session creates its own database (and drops it at the end), so battery
    tables always match this checkout's migrations and parallel runs never share rows.
    """
    import psycopg

    from toolkit_batteries.db.databases import postgres_entry

    name = f"toolkit_t_{os.getpid()}_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(postgres_server_dsn)
    dsn = urlunsplit(parts._replace(path=f"/{name}"))
    with django_db_blocker.unblock():
        migrate_database(postgres_entry(dsn))
    yield dsn
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        if conn.settings_dict.get("NAME") == name:
            conn.close()
    with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory, django_db_blocker) -> Path:
    """Return a SQLite file with every migration applied, made once per session."""
    from toolkit_batteries.db.databases import sqlite_entry

    path = tmp_path_factory.mktemp("sqlite-template") / "migrated.sqlite3"
    with django_db_blocker.unblock():
        migrate_database(sqlite_entry(str(path)))
    return path


@pytest.fixture
def sqlite_dsn(_sqlite_template: Path, tmp_path: Path) -> str:
    """Return the path of a fresh SQLite file with every migration applied."""
    path = tmp_path / "migrated.sqlite3"
    shutil.copyfile(_sqlite_template, path)
    return str(path)


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    """Run a redis-server of this test's own, which the test may stop; killed at teardown."""
    yield from serving(PrivateRedis())


@pytest.fixture(scope="session")
def redis_url() -> str:
    """Return the URL of the real Redis server, failing the test if it is down."""
    return _reachable(settings.TEST_REDIS_URL, 6379, "Redis")


@pytest.fixture
def raw(redis_url: str) -> Iterator[Any]:
    """Return a plain client on the shared Redis, to see or plant what a battery stores."""
    import redis

    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """Start moto's server (S3, KMS, ...) on 127.0.0.1 for the session; yield its URL."""
    import logging

    from moto.server import ThreadedMotoServer

    from tests.ports import free_port

    # The stand-in store's own access log (werkzeug) is the remote server's, not ours.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[Any]:
    """Return a ``redis.Redis`` client on the real server, closed after the test."""
    import redis

    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """Return a key prefix of this test's own; its keys are deleted afterwards."""
    prefix = f"t-{uuid.uuid4().hex}:"
    yield prefix
    drop_redis_prefix(redis_url, prefix)


@pytest.fixture
def open_battery() -> Iterator[BatteryOpener]:
    """Open a battery the real way: ``open_battery("lock", {"adapter": "memory"})``.

    Every container opened is closed at teardown (see :mod:`tests.support.batteries`).
    Request it *after* the local servers the battery talks to (``getfixturevalue`` in the
    fixture body), so the containers close (and flush) before those servers stop.
    """
    opener = BatteryOpener()
    yield opener
    opener.close()

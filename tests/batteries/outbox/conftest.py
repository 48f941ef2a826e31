"""Open the outbox battery the real way (configuration, then a Container) on every adapter.

``memory`` in process; ``db`` on a fresh migrated SQLite file and on the session's
migrated PostgreSQL database (its outbox and queue tables emptied before and after).
Every outbox gets a :class:`FakeClock`, so leases and backoff are tested by moving time.
The ``cdc`` adapter needs ``wal_level=logical``, so :func:`logical_postgres` starts a
PostgreSQL cluster of the test's own (``initdb`` from the installed server).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.ports import accepting, free_port
from tests.support.batteries import migrated_sqlite
from tests.support.clock import EPOCH, FakeClock
from tests.support.processes import wait_for as wait_for  # re-exported to the tests
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.outbox import Outbox

#: ``cdc`` runs on the private ``wal_level=logical`` cluster (:func:`logical_postgres`).
VARIANTS = ("memory", "db-sqlite", "db-postgres", "cdc")
ROOT = Path(__file__).resolve().parents[3]
PG_BIN = Path("/usr/lib/postgresql/15/bin")


@dataclass
class Opened:
    """An opened outbox, its container and clock."""

    variant: str
    outbox: Outbox
    container: Container
    clock: FakeClock

    def atomic(self) -> Any:
        """Return the caller's transaction block on the outbox's database."""
        from django.db import transaction

        alias = getattr(getattr(self.outbox, "database", None), "alias", "default")
        return transaction.atomic(using=alias)


def clear_tables(dsn: str) -> None:
    """Empty the outbox and queue tables of the PostgreSQL database ``dsn``."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in (
            "toolkit_outbox_message",
            "toolkit_outbox_inbox",
            "toolkit_queue_message",
            "toolkit_queue_dead_letter",
        ):
            conn.execute(f"DELETE FROM {table}")


def drop_cdc(dsn: str, slot: str, publication: str) -> None:
    """Drop a cdc outbox's replication slot and publication, then empty its tables."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
            "WHERE slot_name = %s",
            (slot,),
        )
        conn.execute(f'DROP PUBLICATION IF EXISTS "{publication}"')
    clear_tables(dsn)


def seed(dsn: str, count: int, topic: str = "seeded", start: float | None = None) -> None:
    """Insert ``count`` committed pending messages straight into the outbox table."""
    import psycopg

    now = time.time() if start is None else start
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO toolkit_outbox_message (message_id, topic, key, payload, headers, "
            "status, attempts, created_at, available_at, locked_until, locked_by, last_error) "
            "SELECT gen_random_uuid(), %s, '', convert_to('{\"n\":' || n || '}', 'UTF8'), "
            "'{}'::jsonb, 'pending', 0, %s, %s, 0, '', '' FROM generate_series(1, %s) AS n",
            (topic, now, now - 1, count),
        )


@pytest.fixture
def make_outbox(request, tmp_path) -> Iterator[Callable[..., Opened]]:
    """Return ``make(variant, **options)``: open an outbox; clean its tables afterwards."""
    cleanups: list[Callable[[], None]] = []
    containers: list[Container] = []

    def make(variant: str, **options: Any) -> Opened:
        if variant == "memory":
            block = {"adapter": "memory", "options": options}
        elif variant == "db-sqlite":
            block = {"adapter": "db", "options": {"dsn": migrated_sqlite(request, tmp_path)}}
            block["options"].update(options)
        elif variant == "db-postgres":
            dsn = request.getfixturevalue("postgres_dsn")
            clear_tables(dsn)
            cleanups.append(lambda: clear_tables(dsn))
            block = {"adapter": "db", "options": {"dsn": dsn, **options}}
        elif variant == "cdc":
            dsn = request.getfixturevalue("logical_postgres")
            name = f"t_{uuid.uuid4().hex[:10]}"
            clear_tables(dsn)
            cleanups.append(lambda: drop_cdc(dsn, f"{name}_slot", f"{name}_pub"))
            block = {
                "adapter": "cdc",
                "options": {"dsn": dsn, "slot": f"{name}_slot", "publication": f"{name}_pub"},
            }
            block["options"].update(options)
        else:  # pragma: no cover - a typo in a test
            raise ValueError(variant)
        container = Container(Config.load({"outbox": block}, {}))
        containers.append(container)
        outbox = container.outbox()
        if variant == "cdc":  # as in a deployment: the relay's slot exists before publishing
            outbox.ensure_capture()
        clock = FakeClock(EPOCH)
        outbox.clock = clock
        return Opened(variant, outbox, container, clock)

    yield make
    for container in containers:
        container.close()
    for cleanup in cleanups:
        cleanup()


@pytest.fixture(params=VARIANTS)
def variant(request) -> str:
    """Return each contract variant's name."""
    return str(request.param)


@pytest.fixture
def opened(variant, make_outbox) -> Opened:
    """Return an opened outbox on each adapter, with a fake clock."""
    return make_outbox(variant)


# ---------------------------------------------------------------------- processes


def relay_env(**variables: str) -> dict[str, str]:
    """Return the environment of a ``manage.py outbox_relay`` child process."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("QUEUE_", "OUTBOX_", "TOOLKIT_"))
    }
    env.update(DJANGO_SETTINGS_MODULE="tests.settings", PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    env.update(variables)
    return env


def start_relay(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """Start ``python manage.py outbox_relay`` with ``args``, its output going to ``log``."""
    with open(log, "ab") as output:
        return subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "outbox_relay", *args],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


# ---------------------------------------------------------------------- logical PostgreSQL


def _as_postgres(argv: list[str]) -> list[str]:
    """Run ``argv`` as the ``postgres`` user when this process is root (initdb refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return argv


@pytest.fixture(scope="session")
def logical_postgres(django_db_blocker) -> Iterator[str]:
    """Start a private PostgreSQL 15 cluster with ``wal_level=logical``; return a migrated DSN."""
    from tests.conftest import migrate_database
    from toolkit_batteries.db.databases import postgres_entry

    # Not under pytest's temporary root: it is private to root, and initdb runs as postgres.
    base = Path(tempfile.mkdtemp(prefix="toolkit-logical-pg-"))
    data = base / "data"
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    port = free_port()
    subprocess.run(
        _as_postgres([str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]),
        check=True,
        capture_output=True,
        timeout=120,
    )
    options = f"-c wal_level=logical -c listen_addresses=127.0.0.1 -p {port} -k {base}"
    options += " -c max_replication_slots=4 -c max_wal_senders=4 -c fsync=off"
    pg_ctl = [str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(base / "log")]
    subprocess.run(
        _as_postgres([*pg_ctl, "-w", "start"]),
        check=True,
        capture_output=True,
        timeout=120,
    )
    try:
        deadline = time.monotonic() + 30
        while not accepting(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        with django_db_blocker.unblock():
            migrate_database(postgres_entry(dsn))
        yield dsn
    finally:
        from django.db import connections

        for conn in connections.all(initialized_only=True):
            if str(conn.settings_dict.get("PORT")) == str(port):
                with contextlib.suppress(Exception):
                    conn.close()
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(base, ignore_errors=True)

"""Open the queue battery the real way (configuration, then a Container) on every adapter.

``memory`` in process, ``kvserver`` on the real Redis (a unique key prefix per test,
its keys deleted afterwards), ``db`` on a fresh migrated SQLite file and on the
session's migrated PostgreSQL database (its queue tables emptied before and after).
Every queue gets a :class:`FakeClock`, so visibility timeouts and delays are tested by
moving time, not by sleeping; the adapters compute every deadline from ``queue.clock``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.batteries.queue.sqs_server import sqs_block
from tests.batteries.queue.sqs_server import sqs_server as sqs_server  # the sqs fixture
from tests.support.batteries import migrated_sqlite
from tests.support.clock import EPOCH, FakeClock
from tests.support.processes import wait_for as wait_for  # re-exported to the tests
from tests.support.redis_server import drop_redis_prefix as drop_redis_prefix  # re-exported
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.queue import Queue

VARIANTS = ("memory", "kvserver", "db-sqlite", "db-postgres", "sqs")
ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Opened:
    """An opened queue, its container, its clock, and the settings that built it."""

    variant: str
    queue: Queue
    container: Container
    clock: FakeClock
    settings: dict


def unique(prefix: str = "tq") -> str:
    """Return a name no other test (or helper running in parallel) uses."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def clear_queue_tables(dsn: str) -> None:
    """Delete every row of the db queue's two tables on the PostgreSQL database ``dsn``."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM toolkit_queue_message")
        conn.execute("DELETE FROM toolkit_queue_dead_letter")


@pytest.fixture
def make_queue(request, tmp_path) -> Iterator[Callable[..., Opened]]:
    """Return ``make(variant, **options)``: open a queue; clean its keys/table afterwards."""
    cleanups: list[Callable[[], None]] = []
    containers: list[Container] = []

    def make(variant: str, **options: Any) -> Opened:
        if variant == "memory":
            block = {"adapter": "memory", "options": options}
        elif variant == "kvserver":
            url = request.getfixturevalue("redis_url")
            prefix = f"t-{uuid.uuid4().hex}:"
            block = {"adapter": "kvserver", "options": {"url": url, "prefix": prefix, **options}}
            cleanups.append(lambda: drop_redis_prefix(url, prefix))
        elif variant == "db-sqlite":
            path = migrated_sqlite(request, tmp_path)
            block = {"adapter": "db", "options": {"dsn": path, **options}}
        elif variant == "db-postgres":
            # The session's migrated database: its queue tables start empty in every test.
            dsn = request.getfixturevalue("postgres_dsn")
            clear_queue_tables(dsn)
            block = {"adapter": "db", "options": {"dsn": dsn, **options}}
            cleanups.append(lambda: clear_queue_tables(dsn))
        elif variant == "sqs":  # moto's SQS server; queues named by a unique prefix
            server = request.getfixturevalue("sqs_server")
            block = sqs_block(server, f"t{uuid.uuid4().hex[:12]}-", **options)
        else:  # pragma: no cover - a typo in a test
            raise ValueError(variant)
        settings = {"queue": block}
        container = Container(Config.load(settings, {}))
        containers.append(container)
        queue = container.queue()
        clock = FakeClock(EPOCH)
        queue.clock = clock
        if variant == "sqs":  # the SQS server decides visibility: on the same clock
            request.getfixturevalue("sqs_server").follow(clock)
        return Opened(variant, queue, container, clock, settings)

    yield make
    for container in containers:
        container.close()
    for cleanup in cleanups:
        cleanup()


@pytest.fixture(params=VARIANTS)
def opened(request, make_queue) -> Opened:
    """Return an opened queue on each adapter, with a fake clock."""
    return make_queue(request.param)


# ---------------------------------------------------------------------- processes


def worker_env(**variables: str) -> dict[str, str]:
    """Return the environment of a ``manage.py queue_work`` child process."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("QUEUE_", "TOOLKIT_JOBS"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings",
        PYTHONPATH=str(ROOT),
        TOOLKIT_JOBS__IMPORTS="tests.batteries.queue.jobs_fixture",
        PYTHONUNBUFFERED="1",
    )
    env.update(variables)
    return env


def start_worker(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """Start ``python manage.py queue_work`` with ``args``, its output going to ``log``."""
    with open(log, "ab") as output:
        return subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "queue_work", *args],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

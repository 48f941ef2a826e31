"""Open the workflow battery the real way (configuration, then a Container), with a worker.

Variants: ``memory``; ``db`` on a fresh migrated SQLite file; ``db`` on the session's
migrated PostgreSQL database. Every test gets a unique ``namespace`` (so runs of other
tests are invisible) and the memory queue of its container, worked by an in-process
:class:`~toolkit_batteries.queue.jobs.Worker` thread on job queue ``default``; the
``-dbqueue`` variants use the ``db`` queue on the workflow's own database instead, where
a step's record carries its next job and its message's ack in the same transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.queue.adapters.db import MESSAGES
from toolkit_batteries.queue.jobs import Worker

#: Every adapter of the table runs the contract: ``sqlserver`` is the db adapter's other
#: name, opened under that name on PostgreSQL.
VARIANTS = (
    "memory",
    "db-sqlite",
    "db-postgres",
    "sqlserver-postgres",
    "db-sqlite-dbqueue",
    "db-postgres-dbqueue",
)
#: The same list (older name, kept for the tests that import it).
EVERY_ADAPTER = VARIANTS


def unique(prefix: str = "t") -> str:
    return f"{prefix}{uuid.uuid4().hex[:12]}"


@dataclass
class Opened:
    """An opened workflow service, its container and the worker running its steps."""

    variant: str
    workflow: Any
    container: Container
    worker: Worker

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Run a query on the workflow's database (db variants)."""
        return self.workflow.database.fetch_all(sql, params)


def workflow_block(variant: str, request: pytest.FixtureRequest, **options: Any) -> dict:
    """Return the ``workflow`` envelope of ``variant`` with a unique namespace."""
    options.setdefault("namespace", unique("ns"))
    if variant.startswith("db-sqlite"):
        options["dsn"] = request.getfixturevalue("sqlite_dsn")
    elif "-postgres" in variant:
        options["dsn"] = request.getfixturevalue("postgres_dsn")
    adapter = variant.split("-")[0]
    return {"adapter": adapter, "options": options}


def open_workflow(block: dict, *, db_queue: bool = False) -> tuple[Container, Any, Worker]:
    """Open the workflow and start its worker; ``db_queue``: on the workflow's database."""
    queue: dict[str, Any] = {"adapter": "memory", "options": {"poll_timeout": "1s"}}
    if db_queue:
        queue = {"adapter": "db", "options": {"dsn": block["options"]["dsn"], "poll_timeout": "1s"}}
    container = Container(Config.load({"workflow": block, "queue": queue}, {}))
    if db_queue:  # jobs of earlier tests on this database would reach this worker
        container.queue().database.execute(f"DELETE FROM {MESSAGES} WHERE topic = 'jobs:default'")
    workflow = container.workflow()
    worker = Worker(container.queue(), queues=("default",), concurrency=1, poll_timeout=0.2)
    worker.start()
    return container, workflow, worker


def _opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    block = workflow_block(request.param, request)
    container, workflow, worker = open_workflow(block, db_queue=request.param.endswith("dbqueue"))
    try:
        yield Opened(request.param, workflow, container, worker)
    finally:
        worker.stop()
        worker.join(5)
        if workflow.adapter_name != "memory":
            workflow._runs.delete()
        container.close()


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    yield from _opened(request)


@pytest.fixture(params=EVERY_ADAPTER)
def every_adapter(request: pytest.FixtureRequest) -> Iterator[Opened]:
    """Yield the workflow on every adapter name: memory, db (SQLite, PostgreSQL), sqlserver."""
    yield from _opened(request)

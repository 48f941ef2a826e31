"""Open the db battery the real way (configuration, then a Container) on every adapter.

``sqlfile`` runs on a temporary file and on ``:memory:``; ``sqlserver`` on the real
PostgreSQL server. Each test gets a fresh table name, dropped afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.db import Database

VARIANTS = ("sqlfile-file", "sqlfile-memory", "sqlserver")


@dataclass
class Opened:
    """An opened db service, the container that owns it, and a scratch table name."""

    variant: str
    db: Database
    container: Container
    table: str
    settings: dict

    @property
    def memory(self) -> bool:
        """Tell whether this variant is a private in-memory database."""
        return self.variant == "sqlfile-memory"


def db_settings(variant: str, tmp_path, postgres_dsn: str, **extra: object) -> dict:
    """Return ``TOOLKIT`` settings selecting ``variant``."""
    if variant == "sqlfile-file":
        block = {"adapter": "sqlfile", "options": {"path": str(tmp_path / "contract.db"), **extra}}
    elif variant == "sqlfile-memory":
        block = {"adapter": "sqlfile", "options": {"path": ":memory:", **extra}}
    else:
        block = {"adapter": "sqlserver", "options": {"dsn": postgres_dsn, **extra}}
    return {"db": block}


@pytest.fixture(params=VARIANTS)
def opened(request, tmp_path) -> Iterator[Opened]:
    postgres_dsn = request.getfixturevalue("postgres_dsn") if request.param == "sqlserver" else ""
    settings = db_settings(request.param, tmp_path, postgres_dsn)
    container = Container(Config.load(settings, {}))
    db = container.db()
    table = f"tk_contract_{uuid.uuid4().hex[:10]}"
    db.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY, body text NOT NULL)")
    try:
        yield Opened(request.param, db, container, table, settings)
    finally:
        if container.closed:  # the test closed it: drop the table through a fresh one
            container = Container(Config.load(settings, {}))
        container.db().execute(f"DROP TABLE IF EXISTS {table}")
        container.close()

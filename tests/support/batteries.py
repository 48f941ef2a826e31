"""Open a battery the real way (settings, then ``Config``, then a ``Container``) in a test.

The ``open_battery`` fixture (tests/conftest.py) hands out a :class:`BatteryOpener`; every
container it opened is closed at teardown, so a battery conftest writes only the block
that selects its adapter, never the plumbing around it.
"""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest


class BatteryOpener:
    """``open_battery(service, block)`` -> the opened service; containers closed later."""

    def __init__(self) -> None:
        self.containers: list[Any] = []

    def container(self, settings: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
        """Return a Container loaded from ``settings`` (and ``environ``), closed at teardown."""
        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        container = Container(Config.load(settings, environ or {}))
        self.containers.append(container)
        return container

    def __call__(
        self,
        service: str,
        block: dict[str, Any] | None = None,
        *,
        instance: str | None = None,
        environ: dict[str, str] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> Any:
        """Open ``service`` configured by ``block`` (under ``instance`` when named).

        ``settings`` adds other services' blocks (a ``db`` the battery writes to, ...);
        without ``block`` the service's own entry comes from ``settings``.
        """
        full = dict(settings or {})
        if block is not None:
            full[service] = block if instance is None else {instance: block}
        return getattr(self.container(full, environ), service)(instance or "default")

    @property
    def last(self) -> Any:
        """The container the latest call opened (to reach a sibling service or close it)."""
        return self.containers[-1]

    def close(self) -> None:
        """Close every container opened, newest first."""
        while self.containers:
            self.containers.pop().close()


def db_block(request: Any, variant: str, **options: Any) -> dict[str, Any]:
    """Return the ``db`` adapter's block on ``db-sqlite`` or ``db-postgres`` (its DSN fixture)."""
    dsn = request.getfixturevalue(f"{variant.removeprefix('db-')}_dsn")
    return {"adapter": "db", "options": {"dsn": dsn, **options}}


def migrated_sqlite(request: Any, directory: Path, stem: str = "db") -> str:
    """Return the path of a new SQLite file under ``directory`` with every migration applied.

    A copy of the session's migrated template (``_sqlite_template``): migrating once and
    copying is what keeps the db variants of the contract tests fast.
    """
    path = directory / f"{stem}_{uuid.uuid4().hex[:8]}.sqlite3"
    shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
    return str(path)


def assert_opened_as(
    obj: Any, cls: type, adapter: str, container: Any, service: str, instance: str = "default"
) -> None:
    """Assert ``obj`` is the battery's class, opened by ``adapter``, and the container's own.

    Every contract's first test: the service a test got is the one ``services.<x>()`` hands
    out (same object), of the battery's base class, named after the configured adapter, and
    knows its service and instance names.
    """
    assert isinstance(obj, cls)
    assert obj.adapter_name == adapter
    assert (obj.service_name, obj.instance) == (service, instance)
    assert getattr(container, service)(instance) is obj


def empty_sqlite(directory: Path, name: str = "empty.sqlite3") -> Path:
    """Return a new SQLite file with no table at all (a database nobody migrated)."""
    path = directory / name
    sqlite3.connect(path).close()
    return path


def refused_without_tables(container: Any, service: str, path: Path) -> str:
    """Open ``service`` on the unmigrated SQLite ``path``: refused, and no DDL was run.

    Returns the ``MissingTablesError`` text (it names ``manage.py migrate``); the
    container is closed either way.
    """
    from toolkit_batteries.db import MissingTablesError

    try:
        with pytest.raises(MissingTablesError) as info:
            getattr(container, service)()
    finally:
        container.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    assert "manage.py migrate" in str(info.value)
    return str(info.value)

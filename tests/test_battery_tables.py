"""Battery tables are models with migrations: migrate creates them, nothing runs DDL at open."""

from __future__ import annotations

import sqlite3

import pytest
from django.apps import apps
from django.core.management import call_command

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.db import MissingTablesError

#: Every SQL-backed adapter: (service, adapter, its options on a database file).
SQL_ADAPTERS = [
    ("cache", "db"),
    ("idempotency", "db"),
    ("queue", "db"),
    ("session", "db"),
    ("scheduler", "sqlserver"),
    ("outbox", "db"),
    ("search", "db"),
    ("vectorstore", "db"),
    ("workflow", "db"),
]


def _battery_models():
    return [
        model
        for config in apps.get_app_configs()
        if config.label.startswith("toolkit_")
        for model in config.get_models()
    ]


def test_every_sql_battery_has_models():
    labels = {model._meta.app_label for model in _battery_models()}
    for service, _ in SQL_ADAPTERS:
        assert f"toolkit_{service}" in labels, service


def test_makemigrations_check_is_clean():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_migrate_creates_every_battery_table(sqlite_dsn):
    with sqlite3.connect(sqlite_dsn) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    missing = [m._meta.db_table for m in _battery_models() if m._meta.db_table not in tables]
    assert missing == []


@pytest.mark.parametrize(("service", "adapter"), SQL_ADAPTERS)
def test_no_battery_runs_ddl_at_open(service, adapter, tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    # The scheduler takes no options block (its dispatcher must come first): the
    # environment's SERVICE__INSTANCE__FIELD overlay gives every battery its dsn.
    toolkit = {service: {"adapter": adapter}}
    env = {f"{service.upper()}__DEFAULT__DSN": str(path)}
    container = Container(Config.load(toolkit, env))
    try:
        with pytest.raises(MissingTablesError) as info:
            getattr(container, service)()
        assert "manage.py migrate" in str(info.value)
        assert str(path) not in str(info.value)
    finally:
        container.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0

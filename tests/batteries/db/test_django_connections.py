"""The db service is Django's connection: one alias, one transaction, Django's pool."""

from __future__ import annotations

import pytest
from django.db import connections, transaction
from django.db.utils import ConnectionHandler

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.slots import slot_alias
from toolkit_batteries.db import MissingTablesError, django_databases, require_tables
from toolkit_batteries.db.databases import dsn_entry, sqlite_entry


@pytest.fixture
def derived(tmp_path):
    """Return a TOOLKIT block whose db is a SQLite file, as a project might have."""
    toolkit = {"db": {"adapter": "sqlfile", "options": {"path": str(tmp_path / "app.db")}}}
    return toolkit


def test_the_db_instance_is_the_alias_whose_entry_toolkit_derives(derived):
    handler = ConnectionHandler(django_databases(derived))
    entry = sqlite_entry(derived["db"]["options"]["path"])
    assert slot_alias(handler, entry, preferred="default", prefix="toolkit_db") == "default"
    # Another database gets an alias of its own, registered at run time, stable by entry.
    other = sqlite_entry(derived["db"]["options"]["path"] + ".other")
    alias = slot_alias(handler, other, preferred="default", prefix="toolkit_db")
    assert alias.startswith("toolkit_db_") and alias in handler.settings
    assert slot_alias(handler, dict(other), preferred="default", prefix="toolkit_db") == alias


def test_a_db_write_joins_the_callers_atomic_block(derived):
    container = Container(Config.load(derived, {}))
    try:
        db = container.db()
        db.execute("CREATE TABLE notes (id integer PRIMARY KEY, body text)")
        with pytest.raises(RuntimeError), transaction.atomic(using=db.alias):
            db.execute("INSERT INTO notes (id, body) VALUES (%s, %s)", (1, "rolled back"))
            raise RuntimeError("abort")
        assert db.fetch_value("SELECT count(*) FROM notes") == 0
        with transaction.atomic(using=db.alias):
            db.execute("INSERT INTO notes (id, body) VALUES (%s, %s)", (2, "kept"))
        assert db.fetch_value("SELECT body FROM notes") == "kept"
    finally:
        container.close()


def test_a_db_write_joins_the_callers_atomic_block_on_postgres(postgres_dsn):
    toolkit = {"db": {"adapter": "sqlserver", "options": {"dsn": postgres_dsn}}}
    container = Container(Config.load(toolkit, {}))
    try:
        db = container.db()
        db.execute("CREATE TABLE IF NOT EXISTS atomic_probe (id integer PRIMARY KEY)")
        db.execute("DELETE FROM atomic_probe")
        with pytest.raises(RuntimeError), transaction.atomic(using=db.alias):
            db.execute("INSERT INTO atomic_probe (id) VALUES (%s)", (1,))
            raise RuntimeError("abort")
        assert db.fetch_value("SELECT count(*) FROM atomic_probe") == 0
        with transaction.atomic(using=db.alias):
            db.execute("INSERT INTO atomic_probe (id) VALUES (%s)", (2,))
        assert db.fetch_value("SELECT id FROM atomic_probe") == 2
        db.execute("DROP TABLE atomic_probe")
    finally:
        container.close()


def test_a_battery_dsn_equal_to_the_project_database_shares_its_alias(derived):
    path = derived["db"]["options"]["path"]
    entry = dsn_entry(path, None, service="queue", instance="default")
    assert entry == sqlite_entry(path)
    toolkit = {**derived, "queue": {"adapter": "db", "options": {"dsn": path}}}
    # Same database: no extra alias, so the battery's rows commit with the caller's.
    assert list(django_databases(toolkit)) == ["default"]


def test_django_databases_adds_one_alias_per_battery_database(tmp_path, postgres_dsn):
    toolkit = {
        "db": {"options": {"path": str(tmp_path / "app.db")}},
        "queue": {"adapter": "db", "options": {"dsn": postgres_dsn}},
        "cache": {"adapter": "db", "options": {"dsn": str(tmp_path / "cache.db")}},
    }
    databases = django_databases(toolkit)
    assert list(databases) == ["default", "toolkit_cache_default", "toolkit_queue_default"]
    assert databases["toolkit_queue_default"]["ENGINE"] == "django.db.backends.postgresql"
    assert databases["toolkit_cache_default"]["NAME"] == str(tmp_path / "cache.db")


def test_max_conns_turns_on_djangos_pool(postgres_dsn):
    environ = {"DB__DEFAULT__ADAPTER": "postgres", "DB__DEFAULT__DSN": postgres_dsn}
    environ |= {"DB__DEFAULT__MAX_CONNS": "4", "DB__DEFAULT__MIN_CONNS": "1"}
    container = Container(Config.load({}, environ))
    try:
        db = container.db()
        assert db.django_connection.pool.max_size == 4
        assert db.django_connection.pool.min_size == 1
        assert db.fetch_value("SELECT 1") == 1
    finally:
        container.close()
        connections[db.alias].close_pool()


def test_require_tables_names_migrate_and_the_alias(tmp_path):
    from django.contrib.contenttypes.models import ContentType

    container = Container(Config.load({"db": {"options": {"path": str(tmp_path / "e.db")}}}, {}))
    try:
        db = container.db()
        with pytest.raises(MissingTablesError) as info:
            require_tables(db, ContentType, service="queue")
        message = str(info.value)
        assert "django_content_type" in message
        assert "manage.py migrate" in message and db.alias in message
        assert str(tmp_path) not in message  # the path is configuration, never echoed
    finally:
        container.close()


def test_a_closed_database_refuses_use(tmp_path):
    from toolkit_batteries.core.errors import ServiceUnavailableError

    container = Container(Config.load({"db": {"options": {"path": str(tmp_path / "c.db")}}}, {}))
    db = container.db()
    container.close()
    with pytest.raises(ServiceUnavailableError):
        db.fetch_value("SELECT 1")

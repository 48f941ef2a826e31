"""Adapter options, aliases and errors of the db battery."""

from __future__ import annotations

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.db.adapters.sqlfile import SQLFileDatabase
from toolkit_batteries.db.adapters.sqlserver import SQLServerDatabase


def open_db(settings: dict, instance: str = "default"):
    container = Container(Config.load({"db": settings}, {}))
    return container, container.db(instance)


def test_default_is_sqlfile_on_db_sqlite3_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    container = Container(Config.load({}, {}))
    db = container.db()
    try:
        assert isinstance(db, SQLFileDatabase)
        assert db.target == str(tmp_path / "db.sqlite3")
        db.execute("CREATE TABLE t (x integer)")
        assert (tmp_path / "db.sqlite3").exists()
    finally:
        container.close()


@pytest.mark.parametrize("spelling", ["{path}", "sqlite:///{path}", "file:{path}"])
def test_sqlfile_dsn_may_name_the_file(tmp_path, spelling):
    path = tmp_path / "via-dsn.db"
    container, db = open_db({"adapter": "sqlfile", "options": {"dsn": spelling.format(path=path)}})
    try:
        assert db.target == str(path)
        db.execute("CREATE TABLE t (x integer)")
        assert path.exists()
    finally:
        container.close()


def test_sqlfile_path_wins_over_dsn(tmp_path):
    settings = {"options": {"path": str(tmp_path / "p.db"), "dsn": str(tmp_path / "d.db")}}
    container, db = open_db(settings)
    try:
        assert db.target == str(tmp_path / "p.db")
    finally:
        container.close()


def test_sqlfile_refuses_a_postgres_dsn(postgres_dsn):
    with pytest.raises(InvalidOptionsError) as info:
        open_db({"adapter": "sqlfile", "options": {"dsn": postgres_dsn}})
    assert info.value.field == "dsn"
    assert "sqlserver" in str(info.value)
    assert postgres_dsn not in str(info.value)


def test_sqlserver_requires_a_dsn():
    with pytest.raises(InvalidOptionsError) as info:
        open_db({"adapter": "sqlserver"})
    assert str(info.value) == 'db.default: option "dsn" is required by the sqlserver adapter'
    assert (info.value.service, info.value.field) == ("db", "dsn")


def test_sqlserver_refuses_a_file(tmp_path):
    with pytest.raises(InvalidOptionsError) as info:
        open_db({"adapter": "sqlserver", "options": {"dsn": str(tmp_path / "x.db")}})
    assert info.value.field == "dsn"
    assert str(tmp_path) not in str(info.value)


@pytest.mark.parametrize("alias", ["postgres", "postgresql", "sqlserver", "PostgreSQL"])
def test_sqlserver_aliases(alias, postgres_dsn):
    container, db = open_db({"adapter": alias, "options": {"dsn": postgres_dsn}})
    try:
        assert isinstance(db, SQLServerDatabase)
        assert db.fetch_value("SELECT 40 + %s", (2,)) == 42
    finally:
        container.close()


@pytest.mark.parametrize("alias", ["sqlite", "sqlite3", "sqlfile"])
def test_sqlfile_aliases(alias):
    container, db = open_db({"adapter": alias, "options": {"path": ":memory:"}})
    try:
        assert isinstance(db, SQLFileDatabase)
    finally:
        container.close()


def test_libpq_keyword_dsn(postgres_dsn):
    dsn = "host=127.0.0.1 port=5432 dbname=test user=postgres application_name='tk kw'"
    container, db = open_db({"adapter": "sqlserver", "options": {"dsn": dsn}})
    try:
        assert db.fetch_value("SELECT current_setting('application_name')") == "tk kw"
    finally:
        container.close()


def test_dedicated_pool_is_ignored_on_db(tmp_path):
    path = str(tmp_path / "owner.db")
    settings = {
        "default": {"options": {"path": path, "dedicated_pool": True}},
        "other": {"options": {"path": path, "dedicated_pool": True}},
    }
    container = Container(Config.load({"db": settings}, {}))
    try:
        assert container.db().alias == container.db("other").alias
    finally:
        container.close()


def test_environment_configures_the_db(tmp_path, postgres_dsn):
    environ = {
        "DB__DEFAULT__ADAPTER": "postgres",
        "DB__DEFAULT__DSN": postgres_dsn,
        "DB__DEFAULT__MAX_CONNS": "3",
    }
    container = Container(Config.load({}, environ))
    try:
        db = container.db()
        assert db.dialect == "postgresql"
        assert db.django_connection.settings_dict["OPTIONS"]["pool"]["max_size"] == 3
        assert db.django_connection.pool.max_size == 3  # Django's own psycopg pool
    finally:
        container.close()


def test_missing_psycopg_fails_the_open_with_the_extra(postgres_dsn, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingExtraError) as info:
        open_db({"adapter": "sqlserver", "options": {"dsn": postgres_dsn}})
    assert info.value.extra == "sqlserver"

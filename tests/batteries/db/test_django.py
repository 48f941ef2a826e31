"""django_database_settings, the system checks and the db_ping command."""

from __future__ import annotations

import uuid

import pytest
from django.core.management import CommandError, call_command
from django.db.utils import ConnectionHandler
from django.test import override_settings

from tests.support.aliases import aliases_forgotten
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.db import django_database_settings
from toolkit_batteries.db.checks import battery_checks
from toolkit_batteries.db.databases import parse_conninfo

# --------------------------------------------------------------------------- DSN parsing


@pytest.mark.parametrize(
    ("dsn", "expected"),
    [
        (
            "postgres://app:p%40ss@db.example:6543/my%20app?sslmode=require&application_name=web",
            {
                "user": "app",
                "password": "p@ss",
                "host": "db.example",
                "port": "6543",
                "dbname": "my app",
                "sslmode": "require",
                "application_name": "web",
            },
        ),
        (
            "postgresql://h1:5432,h2:5433/app",
            {"host": "h1,h2", "port": "5432,5433", "dbname": "app"},
        ),
        ("postgresql://[::1]:5432/app", {"host": "::1", "port": "5432", "dbname": "app"}),
        (
            "postgresql:///app?host=/var/run/postgresql",
            {"dbname": "app", "host": "/var/run/postgresql"},
        ),
        (
            "host=db port=5432 dbname='my app' password='it\\'s'",
            {"host": "db", "port": "5432", "dbname": "my app", "password": "it's"},
        ),
        ("  dbname = app   user=me ", {"dbname": "app", "user": "me"}),
    ],
)
def test_parse_conninfo(dsn, expected):
    assert parse_conninfo(dsn) == expected


@pytest.mark.parametrize(
    "dsn", ["host=db dbname='zq1x", "zq1x words", "postgres://zq1x:x@h:port/app"]
)
def test_parse_conninfo_rejects_without_the_value(dsn):
    with pytest.raises(ValueError) as info:
        parse_conninfo(dsn)
    assert "zq1x" not in str(info.value)


# --------------------------------------------------------------------------- DATABASES entries


def test_sqlite_entry(tmp_path):
    path = tmp_path / "app.db"
    entry = django_database_settings(config={"db": {"options": {"path": str(path)}}})
    assert entry["ENGINE"] == "django.db.backends.sqlite3"
    assert entry["NAME"] == str(path)
    assert entry["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in entry["OPTIONS"]["init_command"]
    memory = django_database_settings(config={"db": {"options": {"path": ":memory:"}}})
    assert memory["NAME"] == ":memory:" and "init_command" not in memory["OPTIONS"]


def test_postgres_entry_from_a_loaded_config_and_a_named_instance():
    config = Config.load(
        {
            "db": {
                "primary": {
                    "adapter": "postgres",
                    "options": {"dsn": "postgres://app:pw@db:6543/shop?sslmode=require"},
                }
            }
        },
        {},
    )
    assert django_database_settings("primary", config) == {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "shop",
        "USER": "app",
        "PASSWORD": "pw",
        "HOST": "db",
        "PORT": "6543",
        "OPTIONS": {"sslmode": "require"},
    }


def test_entry_without_config_uses_settings_toolkit_and_the_environment(tmp_path, monkeypatch):
    with override_settings(TOOLKIT={"db": {"options": {"path": str(tmp_path / "s.db")}}}):
        assert django_database_settings()["NAME"] == str(tmp_path / "s.db")
        monkeypatch.setenv("DB__DEFAULT__PATH", str(tmp_path / "env.db"))
        assert django_database_settings()["NAME"] == str(tmp_path / "env.db")


def test_sqlserver_entry_needs_a_dsn():
    from toolkit_batteries.core.errors import InvalidOptionsError

    with pytest.raises(InvalidOptionsError, match="required"):
        django_database_settings(config={"db": {"adapter": "sqlserver"}})


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_orm_and_battery_reach_the_same_database(kind, tmp_path, postgres_dsn, django_db_blocker):
    if kind == "sqlite":
        toolkit = {"db": {"options": {"path": str(tmp_path / "same.db")}}}
    else:
        toolkit = {"db": {"adapter": "sqlserver", "options": {"dsn": postgres_dsn}}}
    table = f"tk_same_{uuid.uuid4().hex[:10]}"
    container = Container(Config.load(toolkit, {}))
    db = container.db()
    db.execute(f"CREATE TABLE {table} (v text)")
    db.execute(f"INSERT INTO {table} VALUES (%s)", ("from the battery",))
    handler = ConnectionHandler({"default": django_database_settings(config=toolkit)})
    try:
        with django_db_blocker.unblock():
            connection = handler["default"]
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT v FROM {table}")
                assert cursor.fetchall() == [("from the battery",)]
            connection.close()
    finally:
        db.execute(f"DROP TABLE {table}")
        container.close()


# --------------------------------------------------------------------------- checks


def check_ids(toolkit: dict) -> list[str]:
    return [message.id for message in battery_checks(Config.load(toolkit, {}))]


def test_checks_pass_on_the_defaults_and_a_good_server_config(postgres_dsn):
    assert check_ids({}) == []
    good = {
        "adapter": "sqlserver",
        "options": {"dsn": postgres_dsn, "max_conns": 5, "min_conns": 2},
    }
    assert check_ids({"db": good}) == []


def test_check_w001_max_conns_below_min_conns(postgres_dsn):
    block = {
        "adapter": "sqlserver",
        "options": {"dsn": postgres_dsn, "max_conns": 2, "min_conns": 5},
    }
    [message] = battery_checks(Config.load({"db": {"primary": block}}, {}))
    assert message.id == "toolkit_db.W001"
    assert "db.primary" in message.msg and postgres_dsn not in message.msg
    # Unset max_conns (0) means the default cap: no warning.
    block["options"]["max_conns"] = 0
    assert check_ids({"db": {"primary": block}}) == []


def test_check_e002_missing_dsn_and_e003_wrong_dialect(tmp_path, postgres_dsn):
    assert check_ids({"db": {"adapter": "sqlserver"}}) == ["toolkit_db.E002"]
    wrong = {"adapter": "sqlserver", "options": {"dsn": str(tmp_path / "x.db")}}
    assert check_ids({"db": wrong}) == ["toolkit_db.E003"]
    assert check_ids({"db": {"options": {"dsn": postgres_dsn}}}) == ["toolkit_db.E003"]


def test_checks_run_through_manage_py_check():
    from django.core.checks import run_checks

    with override_settings(TOOLKIT={"db": {"adapter": "sqlserver"}}):
        ids = [m.id for m in run_checks(tags=["toolkit"])]
    assert "toolkit_db.E002" in ids


# --------------------------------------------------------------------------- db_ping


def test_db_ping_reports_dialect_and_redacted_target(postgres_dsn, capsys):
    dsn = postgres_dsn.replace("postgres@", "postgres:hunter2@")
    with override_settings(TOOLKIT={"db": {"adapter": "sqlserver", "options": {"dsn": dsn}}}):
        call_command("db_ping")
    out = capsys.readouterr().out
    assert out.startswith("db.default: ok (postgresql, postgresql://postgres:[redacted]@")
    assert "hunter2" not in out


def test_db_ping_sqlite_instance(tmp_path, capsys):
    toolkit = {"db": {"replica": {"options": {"path": str(tmp_path / "r.db")}}}}
    with override_settings(TOOLKIT=toolkit):
        call_command("db_ping", "--instance", "replica")
    assert f"db.replica: ok (sqlite, {tmp_path / 'r.db'}, sqlfile)" in capsys.readouterr().out


def test_db_ping_unreachable_exits_5_without_the_dsn():
    dsn = "postgresql://postgres:hunter2@127.0.0.1:1/test"
    toolkit = {"db": {"adapter": "sqlserver", "options": {"dsn": dsn}}}
    with (
        aliases_forgotten(),
        override_settings(TOOLKIT=toolkit),
        pytest.raises(CommandError) as info,
    ):
        call_command("db_ping")
    assert info.value.returncode == 5
    assert "hunter2" not in str(info.value) and "127.0.0.1" not in str(info.value)


def test_db_ping_invalid_configuration_exits_3():
    toolkit = {"db": {"adapter": "sqlserver"}}
    with override_settings(TOOLKIT=toolkit), pytest.raises(CommandError) as info:
        call_command("db_ping")
    assert info.value.returncode == 3
    assert "dsn" in str(info.value)

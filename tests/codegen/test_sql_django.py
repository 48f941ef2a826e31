"""The ``sql`` DDL and the Django migrations of one schema build the same PostgreSQL tables.

Each side gets a fresh database: one runs ``sql/postgres/schema.sql``, the other runs
``manage.py migrate`` (in a subprocess with its own settings) over the ``models`` and
``migrations`` backends' output. The catalogs must agree exactly on every table of the
DDL: columns, their types and lengths, nullability, and the primary key (enums are ``text``
and ``float32`` is ``double precision`` on both sides; see the ``sql`` backend).
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from toolkit_codegen.backends import BackendOptions
from toolkit_codegen.backends.sql import render_ddl
from toolkit_codegen.compiler import compile_schema, load_paths

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCHEMAS = HERE / "schemas"
FIXTURES = ("spec_example", "every_feature", "multi_service")

_MIGRATE = """
import sys
import django
from django.conf import settings
from django.core.management import call_command

sys.path.insert(0, {project!r})
settings.configure(
    INSTALLED_APPS=["api"],
    DATABASES={{"default": {database!r}}},
    USE_TZ=True,
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)
django.setup()
call_command("migrate", "api", verbosity=0)
"""


@pytest.fixture
def databases(postgres_dsn: str) -> Iterator[Callable[[], str]]:
    """Return a maker of fresh databases; every one is dropped at the end."""
    made: list[str] = []

    def make() -> str:
        name = f"toolkit_t_{uuid.uuid4().hex}"
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return make_conninfo(postgres_dsn, dbname=name)

    try:
        yield make
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            for name in made:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def catalog(dsn: str) -> tuple[dict[str, dict[str, tuple]], dict[str, list[str]]]:
    """Return ``({table: {column: (type, length, nullable)}}, {table: [pk columns]})``."""
    with psycopg.connect(dsn) as conn:
        columns: dict[str, dict[str, tuple]] = {}
        for table, column, data_type, length, nullable in conn.execute(
            """
            SELECT table_name, column_name, data_type, character_maximum_length, is_nullable
            FROM information_schema.columns
            WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
            ORDER BY table_name, ordinal_position
            """
        ):
            columns.setdefault(table, {})[column] = (data_type, length, nullable == "YES")
        primary: dict[str, list[str]] = {}
        for table, column in conn.execute(
            """
            SELECT tc.table_name, kcu.column_name
            FROM information_schema.table_constraints tc
            JOIN information_schema.key_column_usage kcu
              ON kcu.constraint_name = tc.constraint_name
             AND kcu.table_schema = tc.table_schema
             AND kcu.table_name = tc.table_name
            WHERE tc.constraint_type = 'PRIMARY KEY'
            ORDER BY tc.table_name, kcu.ordinal_position
            """
        ):
            primary.setdefault(table, []).append(column)
    return columns, primary


def migrate_with_django(schema_dir: Path, dsn: str, project: Path) -> None:
    """Write the Django backends' files as app ``api`` and run ``migrate`` into ``dsn``."""
    out = compile_schema(
        load_paths([schema_dir]),
        ["models", "migrations"],
        BackendOptions(app_label="api", app_module="api"),
    )
    assert out.ok, [str(d) for d in out.diagnostics]
    app = project / "api"
    (app / "migrations").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "migrations" / "__init__.py").write_text("")
    (app / "models.py").write_text("from .generated.models import *  # noqa: F403\n")
    for rel, text in out.files.items():
        backend, inner = rel.split("/", 1)
        assert backend in {"models", "migrations"}
        (app / inner).parent.mkdir(parents=True, exist_ok=True)
        (app / inner).write_text(text)
    params = conninfo_to_dict(dsn)
    database = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": params["dbname"],
        "USER": params.get("user", "postgres"),
        "HOST": params.get("host", "127.0.0.1"),
        "PORT": str(params.get("port", "5432")),
    }
    if params.get("password"):
        database["PASSWORD"] = params["password"]
    code = textwrap.dedent(_MIGRATE).format(project=str(project), database=database)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.postgres
@pytest.mark.parametrize("fixture", FIXTURES)
def test_django_migrations_and_sql_ddl_build_the_same_tables(
    fixture: str, databases: Callable[[], str], tmp_path: Path
) -> None:
    loaded = load_paths([SCHEMAS / fixture])
    assert loaded.ok
    schema = loaded.schema
    ddl_db, django_db = databases(), databases()
    with psycopg.connect(ddl_db, autocommit=True) as conn:
        conn.execute(render_ddl(schema, "postgres"))
    migrate_with_django(SCHEMAS / fixture, django_db, tmp_path)
    ddl_columns, ddl_pk = catalog(ddl_db)
    django_columns, django_pk = catalog(django_db)
    tables = {e.table_name for e in schema.entities}
    assert set(ddl_columns) == tables
    assert tables <= set(django_columns)
    for table in sorted(tables):
        # Same columns; not the same order (Django adds foreign keys after the rest).
        assert sorted(ddl_columns[table]) == sorted(django_columns[table]), table
        assert ddl_pk[table] == django_pk[table], table
        # Type, length and nullability of every column agree exactly.
        assert ddl_columns[table] == django_columns[table], table
    # Enum columns refuse unknown values on both sides (a CHECK over the same values).
    ddl_checks = enum_checks(ddl_db, tables)
    assert ddl_checks == enum_checks(django_db, tables)
    expected = {
        (e.table_name, f.name)
        for e in schema.entities
        for f in e.fields
        if f.type.is_inline_enum or schema.enum(f.type.name) is not None
    }
    assert set(ddl_checks) == expected


def enum_checks(dsn: str, tables: set[str]) -> dict[tuple[str, str], tuple[str, ...]]:
    """Return ``{(table, column): sorted allowed values}`` of single-column CHECKs."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    with psycopg.connect(dsn) as conn:
        for table, column, definition in conn.execute(
            """
            SELECT cl.relname, a.attname, pg_get_constraintdef(c.oid)
            FROM pg_constraint c
            JOIN pg_class cl ON cl.oid = c.conrelid
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
            WHERE c.contype = 'c' AND array_length(c.conkey, 1) = 1
            """
        ):
            if table in tables:
                out[(table, column)] = tuple(sorted(re.findall(r"'((?:[^']|'')*)'", definition)))
    return out

"""The ``sql`` backend: golden files, and the DDL applied to real PostgreSQL and SQLite.

The PostgreSQL tests create a database of their own (``toolkit_t_<uuid>``) and drop it at
the end, so concurrent test runs never see each other's tables.
"""

from __future__ import annotations

import os
import re
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from toolkit_codegen.backends import BackendOptions
from toolkit_codegen.backends.sql import render_ddl
from toolkit_codegen.compiler import compile_schema, load_paths, load_sources
from toolkit_codegen.nodes import Entity, Field, Schema

HERE = Path(__file__).resolve().parent
SCHEMAS = HERE / "schemas"
GOLDEN = HERE / "golden"
FIXTURES = ("spec_example", "every_feature", "multi_service")


def load_fixture(fixture: str) -> Schema:
    """Return a fixture's validated schema."""
    loaded = load_paths([SCHEMAS / fixture])
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    return loaded.schema


def load_text(text: str) -> Schema:
    """Return the schema of one ``app.toolkit`` text."""
    loaded = load_sources({"app.toolkit": text})
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    return loaded.schema


def check_golden(fixture: str, backend: str) -> None:
    """Compare a backend's files with the golden copies (rewrite them when asked)."""
    out = compile_schema(load_paths([SCHEMAS / fixture]), [backend], BackendOptions())
    assert out.ok, [str(d) for d in out.diagnostics]
    root = GOLDEN / fixture
    if os.environ.get("TOOLKIT_UPDATE_GOLDEN") == "1":
        for stale in (root / backend).rglob("*"):
            if stale.is_file() and stale.relative_to(root).as_posix() not in out.files:
                stale.unlink()
        for rel, text in out.files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    on_disk = {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in (root / backend).rglob("*")
        if p.is_file()
    }
    assert sorted(out.files) == sorted(on_disk), "set TOOLKIT_UPDATE_GOLDEN=1 to regenerate"
    for rel, text in out.files.items():
        assert text == on_disk[rel], f"{rel} differs from its golden copy"


# -- what the DDL says ----------------------------------------------------------------------

_TABLE = re.compile(r'CREATE TABLE IF NOT EXISTS (?:"(\w+)"\.)?"(\w+)" \((.*?)\n\);', re.S)
_COLUMN = re.compile(
    r'^  "(?P<name>\w+)" (?P<type>.+?)'
    r"(?P<notnull> NOT NULL)?(?: DEFAULT .+?)?(?: UNIQUE)?(?: CHECK .+?)?(?: REFERENCES .+)?$"
)
_PRIMARY = re.compile(r"^  PRIMARY KEY \((.*)\)$")


def ddl_tables(ddl: str) -> dict[str, dict]:
    """Parse the CREATE TABLE statements: ``{table: {"columns": {...}, "pk": [...]}}``."""
    tables: dict[str, dict] = {}
    for match in _TABLE.finditer(ddl):
        columns: dict[str, tuple[str, bool]] = {}
        pk: list[str] = []
        for line in match.group(3).strip("\n").split(",\n"):
            primary = _PRIMARY.match(line)
            if primary:
                pk = [c.strip('" ') for c in primary.group(1).split(",")]
                continue
            column = _COLUMN.match(line)
            assert column, line
            columns[column["name"]] = (column["type"], column["notnull"] is None)
        tables[match.group(2)] = {"schema": match.group(1), "columns": columns, "pk": pk}
    return tables


def pg_catalog_type(ddl_type: str) -> tuple[str, int | None, str | None]:
    """Return (data_type, character_maximum_length, udt_name) for a DDL column type."""
    varchar = re.fullmatch(r"varchar\((\d+)\)", ddl_type)
    if varchar:
        return "character varying", int(varchar.group(1)), None
    if ddl_type.startswith('"'):
        return "USER-DEFINED", None, ddl_type.strip('"')
    if ddl_type == "timestamptz":
        return "timestamp with time zone", None, None
    return ddl_type, None, None


#: The spec's rules (and their extension), as information_schema spells the types.
SPEC_PG_TYPES = {
    "uuid": "uuid",
    "string": "text",
    "bool": "boolean",
    "timestamp": "timestamp with time zone",
    "int32": "integer",
    "int64": "bigint",
    "float32": "double precision",  # Django's FloatField; see the sql backend's docstring
    "float64": "double precision",
    "date": "date",
    "bytes": "bytea",
    "json": "jsonb",
}


def spec_expectation(schema: Schema, entity: Entity, fld: Field) -> tuple[str, int | None, bool]:
    """Return what the spec says a column is: (data_type, max length, nullable)."""
    set_null = any(
        r.kind == "belongs_to" and r.foreign_key == fld.name and r.on_delete == "set_null"
        for r in entity.relations
    )
    nullable = fld.optional or set_null
    if fld.type.is_inline_enum or not fld.type.is_scalar:
        assert fld.type.is_inline_enum or schema.enum(fld.type.name) is not None
        return "text", None, nullable  # enums: text with a CHECK on both dialects
    if fld.type.name == "string" and fld.max_len is not None:
        return "character varying", fld.max_len, nullable
    return SPEC_PG_TYPES[fld.type.name], None, nullable


# -- PostgreSQL -----------------------------------------------------------------------------


@pytest.fixture
def fresh_database(postgres_dsn: str) -> Iterator[str]:
    """Create an empty database for one test and drop it afterwards."""
    name = f"toolkit_t_{uuid.uuid4().hex}"
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(postgres_dsn, dbname=name)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pg_columns(conn: psycopg.Connection) -> dict[str, dict[str, tuple]]:
    rows = conn.execute(
        """
        SELECT table_name, column_name, data_type, character_maximum_length, is_nullable,
               udt_name
        FROM information_schema.columns
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
        ORDER BY table_name, ordinal_position
        """
    ).fetchall()
    out: dict[str, dict[str, tuple]] = {}
    for table, column, data_type, length, nullable, udt in rows:
        out.setdefault(table, {})[column] = (data_type, length, nullable == "YES", udt)
    return out


def pg_primary_keys(conn: psycopg.Connection) -> dict[str, list[str]]:
    rows = conn.execute(
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
    ).fetchall()
    out: dict[str, list[str]] = {}
    for table, column in rows:
        out.setdefault(table, []).append(column)
    return out


@pytest.mark.postgres
@pytest.mark.parametrize("fixture", FIXTURES)
def test_postgres_catalog_matches_the_ddl_and_the_spec(fixture: str, fresh_database: str) -> None:
    schema = load_fixture(fixture)
    ddl = render_ddl(schema, "postgres")
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute(ddl)
        conn.execute(ddl)  # idempotent: a second run changes nothing and fails nothing
        columns = pg_columns(conn)
        primary = pg_primary_keys(conn)
        schemas = {
            row[0]: row[1]
            for row in conn.execute(
                "SELECT table_name, table_schema FROM information_schema.tables"
                " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
            )
        }
    tables = ddl_tables(ddl)
    assert set(columns) == set(tables) == {e.table_name for e in schema.entities}
    for table, declared in tables.items():
        assert schemas[table] == declared["schema"]
        assert list(columns[table]) == list(declared["columns"]), table
        for column, (ddl_type, nullable) in declared["columns"].items():
            data_type, length, is_nullable, udt = columns[table][column]
            want_type, want_length, want_udt = pg_catalog_type(ddl_type)
            assert (data_type, length, is_nullable) == (want_type, want_length, nullable), (
                table,
                column,
            )
            if want_udt is not None:
                assert udt == want_udt
        assert primary.get(table, []) == declared["pk"], table
    # ... and the DDL says what the spec's rules say, field by field.
    for module in schema.modules:
        for entity in module.entities:
            table = columns[entity.table_name]
            assert schemas[entity.table_name] == (entity.db_schema or module.name or "public")
            for fld in entity.fields:
                data_type, length, is_nullable, _ = table[fld.name]
                assert (data_type, length, is_nullable) == spec_expectation(schema, entity, fld)
            assert primary[entity.table_name] == [f.name for f in entity.primary_fields]


@pytest.mark.postgres
def test_postgres_constraints_behave(fresh_database: str) -> None:
    schema = load_fixture("every_feature")
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute(render_ddl(schema, "postgres"))
        customer, coupon, order = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        conn.execute(
            "INSERT INTO customers (id, email, display_name) VALUES (%s, %s, %s)",
            (customer, "a@example.com", "Ann"),
        )
        row = conn.execute(
            "SELECT role::text, tier, loyalty_points, verified, created_at IS NOT NULL"
            " FROM customers"
        ).fetchone()
        assert row == ("member", "bronze", 0, False, True)  # the defaults
        conn.execute(
            "INSERT INTO coupons (id, code, percent_off) VALUES (%s, 'SAVE', 5)", (coupon,)
        )
        conn.execute(
            "INSERT INTO orders (id, customer_id, coupon_id, total_cents) VALUES (%s, %s, %s, 9)",
            (order, customer, coupon),
        )
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute(
                "INSERT INTO orders (id, customer_id, total_cents) VALUES (%s, %s, 1)",
                (uuid.uuid4(), uuid.uuid4()),
            )
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE orders SET status = 'lost'")  # named enum: text + CHECK
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE customers SET tier = 'platinum'")
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(
                "INSERT INTO customers (id, email, display_name) VALUES (%s, %s, 'B')",
                (uuid.uuid4(), "a@example.com"),
            )
        with pytest.raises(psycopg.errors.NotNullViolation):
            conn.execute("INSERT INTO coupons (id, code) VALUES (%s, 'NOPE')", (uuid.uuid4(),))
        conn.execute("DELETE FROM coupons")  # set_null
        assert conn.execute("SELECT coupon_id FROM orders").fetchone() == (None,)
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("DELETE FROM customers")  # restrict
        conn.execute(
            "INSERT INTO billing.invoices VALUES (%s, %s, 9, '2030-01-02')", (uuid.uuid4(), order)
        )
        conn.execute("DELETE FROM orders")  # cascade into billing.invoices
        assert conn.execute("SELECT count(*) FROM billing.invoices").fetchone() == (0,)
        indexes = {
            name: definition
            for name, definition in conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
            )
        }
    assert "UNIQUE" in indexes["customers_email_role_key"]
    assert "UNIQUE" not in indexes["customers_display_name_idx"]
    assert "(customer_id, created_at)" in indexes["orders_customer_id_created_at_idx"]
    assert "UNIQUE" in indexes["products_sku_key"]


CYCLE = """
entity Team {
  id: uuid @primary
  captain_id: uuid?
  belongs_to captain: Member @foreign_key(captain_id) @on_delete(set_null)
  has_many members: Member @foreign_key(team_id)
}

entity Member {
  id: uuid @primary
  team_id: uuid
  mentor_id: uuid?
  belongs_to team: Team @foreign_key(team_id) @on_delete(cascade)
  belongs_to mentor: Member @foreign_key(mentor_id) @on_delete(set_null)
  has_many mentees: Member @foreign_key(mentor_id)
  has_one captained: Team @foreign_key(captain_id)
}
"""


@pytest.mark.postgres
def test_postgres_foreign_key_cycles_and_self_references(fresh_database: str) -> None:
    ddl = render_ddl(load_text(CYCLE), "postgres")
    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute(ddl)
        conn.execute(ddl)
        rules = {
            (row[0], row[1]): row[2]
            for row in conn.execute(
                """
                SELECT kcu.table_name, kcu.column_name, rc.delete_rule
                FROM information_schema.referential_constraints rc
                JOIN information_schema.key_column_usage kcu
                  ON kcu.constraint_name = rc.constraint_name
                """
            )
        }
    assert rules == {
        ("teams", "captain_id"): "SET NULL",
        ("members", "team_id"): "CASCADE",
        ("members", "mentor_id"): "SET NULL",
    }


# -- SQLite ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES)
def test_sqlite_table_info_matches_the_ddl(fixture: str) -> None:
    schema = load_fixture(fixture)
    ddl = render_ddl(schema, "sqlite")
    tables = ddl_tables(ddl)
    assert set(tables) == {e.table_name for e in schema.entities}
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(ddl)
        conn.executescript(ddl)
        for table, declared in tables.items():
            assert declared["schema"] is None
            info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            assert [row[1] for row in info] == list(declared["columns"])
            for _, name, col_type, notnull, _, _ in info:
                ddl_type, nullable = declared["columns"][name]
                assert (col_type, bool(notnull)) == (ddl_type, not nullable), (table, name)
            pk = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5]]
            assert pk == declared["pk"]
        for entity in schema.entities:
            info = {
                row[1]: row for row in conn.execute(f'PRAGMA table_info("{entity.table_name}")')
            }
            for fld in entity.fields:
                _, want_length, nullable = spec_expectation(schema, entity, fld)
                assert bool(info[fld.name][3]) is not nullable
                if want_length is not None:
                    assert info[fld.name][2] == f"VARCHAR({want_length})"
    finally:
        conn.close()


def test_sqlite_constraints_behave() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.executescript(render_ddl(load_fixture("every_feature"), "sqlite"))
        conn.execute("INSERT INTO customers (id, email, display_name) VALUES ('c', 'a@b.c', 'A')")
        role, created = conn.execute("SELECT role, created_at FROM customers").fetchone()
        assert role == "member"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", created)
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            conn.execute("UPDATE customers SET role = 'owner'")  # named enum: CHECK
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            conn.execute("UPDATE customers SET tier = 'platinum'")
        conn.execute("INSERT INTO coupons VALUES ('k', 'SAVE', 5)")
        conn.execute(
            "INSERT INTO orders (id, customer_id, coupon_id, total_cents) VALUES ('o', 'c', 'k', 1)"
        )
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            conn.execute(
                "INSERT INTO orders (id, customer_id, total_cents) VALUES ('x', 'nobody', 1)"
            )
        conn.execute("DELETE FROM coupons")
        assert conn.execute("SELECT coupon_id FROM orders").fetchone() == (None,)
        fks = conn.execute('PRAGMA foreign_key_list("orders")').fetchall()
        assert {(row[2], row[3], row[4], row[6]) for row in fks} == {
            ("customers", "customer_id", "id", "RESTRICT"),
            ("coupons", "coupon_id", "id", "SET NULL"),
        }
        indexes = {row[1]: row[2] for row in conn.execute('PRAGMA index_list("customers")')}
        assert indexes["customers_email_role_key"] == 1
        assert indexes["customers_display_name_idx"] == 0
    finally:
        conn.close()


# -- files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES)
def test_matches_golden_files(fixture: str) -> None:
    check_golden(fixture, "sql")


def test_dialects_follow_the_options_and_unknown_ones_are_refused() -> None:
    schema = load_fixture("spec_example")
    out = compile_schema(
        load_paths([SCHEMAS / "spec_example"]), ["sql"], BackendOptions(sql_dialects=("sqlite",))
    )
    assert list(out.files) == ["sql/sqlite/schema.sql"]
    assert out.files["sql/sqlite/schema.sql"].startswith(
        "-- Generated by toolkit from the schema; do not edit.\n"
    )
    with pytest.raises(ValueError, match="mysql"):
        render_ddl(schema, "mysql")


def test_spec_rules_on_the_spec_example() -> None:
    ddl = render_ddl(load_fixture("spec_example"), "postgres")
    assert 'CREATE SCHEMA IF NOT EXISTS "public";' in ddl
    users = ddl_tables(ddl)["users"]
    assert users["schema"] == "public"
    assert users["columns"] == {
        "id": ("uuid", False),
        "email": ("varchar(255)", False),
        "name": ("varchar(100)", False),
        "created_at": ("timestamptz", False),
    }
    assert users["pk"] == ["id"]
    assert ddl_tables(ddl)["orders"]["columns"]["paid"] == ("boolean", False)

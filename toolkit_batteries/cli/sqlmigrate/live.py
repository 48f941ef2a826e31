"""Read what a database holds now: schemas, tables, columns and indexes.

Only the tables the schema declares are read (other tables are none of our business).
Types come back in the form the diff compares: PostgreSQL's ``format_type`` spelling
(``character varying(200)``, ``timestamp with time zone``) and SQLite's declared type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .target import Connection

__all__ = ["LiveColumn", "LiveIndex", "LiveTable", "read_table", "schema_exists", "table_exists"]


@dataclass(frozen=True, slots=True)
class LiveColumn:
    """A column as the database reports it."""

    name: str
    type: str
    nullable: bool


@dataclass(frozen=True, slots=True)
class LiveIndex:
    """An index and the SQL that recreates it (``None`` for implicit ones)."""

    name: str
    sql: str | None


@dataclass(slots=True)
class LiveTable:
    """A table's columns (in order) and its indexes."""

    columns: dict[str, LiveColumn] = field(default_factory=dict)
    indexes: dict[str, LiveIndex] = field(default_factory=dict)


def schema_exists(conn: Connection | None, name: str) -> bool:
    """Tell whether PostgreSQL schema ``name`` exists (``public`` is assumed to)."""
    if conn is None:
        return name == "public"
    return bool(conn.value("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,)))


def table_exists(conn: Connection | None, db_schema: str, name: str) -> bool:
    """Tell whether the table exists."""
    if conn is None:
        return False
    if conn.dialect == "sqlite":
        return bool(
            conn.value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", (name,))
        )
    return bool(
        conn.value(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
            (db_schema, name),
        )
    )


def read_table(conn: Connection, db_schema: str, name: str) -> LiveTable:
    """Return the columns and indexes of an existing table."""
    table = LiveTable()
    if conn.dialect == "sqlite":
        quoted = '"' + name.replace('"', '""') + '"'
        for _cid, column, typ, notnull, _default, _pk in conn.rows(f"PRAGMA table_info({quoted})"):
            table.columns[column] = LiveColumn(column, str(typ or ""), not notnull)
        for index, sql in conn.rows(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s", (name,)
        ):
            table.indexes[index] = LiveIndex(index, sql)
        return table
    for column, typ, notnull in conn.rows(
        """
        SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum
        """,
        (db_schema, name),
    ):
        table.columns[column] = LiveColumn(column, typ, not notnull)
    for index, sql, constraint in conn.rows(
        """
        SELECT i.indexname, i.indexdef,
               EXISTS (SELECT 1 FROM pg_constraint k
                       JOIN pg_class ic ON ic.oid = k.conindid
                       WHERE ic.relname = i.indexname)
        FROM pg_indexes i
        WHERE i.schemaname = %s AND i.tablename = %s
        """,
        (db_schema, name),
    ):
        # An index that backs a constraint (primary key, inline UNIQUE) is not ours to drop.
        table.indexes[index] = LiveIndex(index, None if constraint else sql)
    return table

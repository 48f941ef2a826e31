"""Read what a database holds now: tables, columns, indexes and foreign keys.

Only the tables the schema declares are read (other tables are none of our business), and
on PostgreSQL only in the connection's schema (``current_schema()``), where the ``sql``
backend puts every table.
Types come back in the form the diff compares: PostgreSQL's ``format_type`` spelling
(``character varying(200)``, ``timestamp with time zone``) and SQLite's declared type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .target import Connection

__all__ = ["LiveColumn", "LiveForeignKey", "LiveIndex", "LiveTable", "read_table", "table_exists"]


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


@dataclass(frozen=True, slots=True)
class LiveForeignKey:
    """A single-column foreign key: its constraint, the referenced table and column."""

    #: The constraint name (PostgreSQL); ``""`` on SQLite.
    name: str
    table: str
    #: ``""`` when SQLite's declaration names no column (the target's primary key).
    column: str
    #: ``RESTRICT``, ``CASCADE``, ``SET NULL``, ``NO ACTION`` or ``SET DEFAULT``.
    on_delete: str
    #: ``FOREIGN KEY (...) REFERENCES ...`` as PostgreSQL prints it (to re-add it).
    definition: str = ""


@dataclass(slots=True)
class LiveTable:
    """A table's columns (in order), its indexes and its foreign keys by column."""

    columns: dict[str, LiveColumn] = field(default_factory=dict)
    indexes: dict[str, LiveIndex] = field(default_factory=dict)
    foreign_keys: dict[str, LiveForeignKey] = field(default_factory=dict)


_PG_ACTIONS = {
    "a": "NO ACTION",
    "r": "RESTRICT",
    "c": "CASCADE",
    "n": "SET NULL",
    "d": "SET DEFAULT",
}


def table_exists(conn: Connection | None, name: str) -> bool:
    """Tell whether the table exists."""
    if conn is None:
        return False
    if conn.dialect == "sqlite":
        return bool(
            conn.value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", (name,))
        )
    return bool(
        conn.value(
            "SELECT 1 FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_name = %s",
            (name,),
        )
    )


def read_table(conn: Connection, name: str) -> LiveTable:
    """Return the columns, indexes and foreign keys of an existing table."""
    table = LiveTable()
    if conn.dialect == "sqlite":
        quoted = '"' + name.replace('"', '""') + '"'
        for _cid, column, typ, notnull, _default, _pk in conn.rows(f"PRAGMA table_info({quoted})"):
            table.columns[column] = LiveColumn(column, str(typ or ""), not notnull)
        for index, sql in conn.rows(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s", (name,)
        ):
            table.indexes[index] = LiveIndex(index, sql)
        for row in conn.rows(f"PRAGMA foreign_key_list({quoted})"):
            _id, _seq, target, column, to, _on_update, on_delete = row[:7]
            table.foreign_keys[column] = LiveForeignKey(
                "", str(target), str(to or ""), str(on_delete).upper()
            )
        return table
    for column, typ, notnull in conn.rows(
        """
        SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relname = %s
          AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum
        """,
        (name,),
    ):
        table.columns[column] = LiveColumn(column, typ, not notnull)
    for index, sql, constraint in conn.rows(
        """
        SELECT i.indexname, i.indexdef,
               EXISTS (SELECT 1 FROM pg_constraint k
                       JOIN pg_class ic ON ic.oid = k.conindid
                       WHERE ic.relname = i.indexname)
        FROM pg_indexes i
        WHERE i.schemaname = current_schema() AND i.tablename = %s
        """,
        (name,),
    ):
        # An index that backs a constraint (primary key, inline UNIQUE) is not ours to drop.
        table.indexes[index] = LiveIndex(index, None if constraint else sql)
    for constraint, column, target, target_column, action, definition in conn.rows(
        """
        SELECT k.conname, a.attname, t.relname, ta.attname, k.confdeltype,
               pg_get_constraintdef(k.oid)
        FROM pg_constraint k
        JOIN pg_class c ON c.oid = k.conrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_class t ON t.oid = k.confrelid
        JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
        JOIN pg_attribute ta ON ta.attrelid = k.confrelid AND ta.attnum = k.confkey[1]
        WHERE k.contype = 'f' AND n.nspname = current_schema() AND c.relname = %s
          AND array_length(k.conkey, 1) = 1
        """,
        (name,),
    ):
        table.foreign_keys[column] = LiveForeignKey(
            constraint, target, target_column, _PG_ACTIONS.get(action, "NO ACTION"), definition
        )
    return table

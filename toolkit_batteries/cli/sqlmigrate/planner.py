"""Diff the declared schema against the live database and list the statements to run.

Rules (the original toolkit's live-diff migrations, section 3.6 of the facts):

* a table that does not exist (entity or many-to-many join table) gets its ``CREATE
  TABLE``; its indexes (declared, and one per non-unique foreign key) follow once every
  table exists;
* an existing table is diffed: ``@renamed_from`` -> ``RENAME COLUMN``; a missing column
  -> ``ADD COLUMN`` (nullable, or ``NOT NULL`` with its declared constant default; on
  PostgreSQL also ``NOT NULL`` when the table is empty); a missing declared index ->
  ``CREATE INDEX``; a toolkit-named index (``<table>_..._idx``) no longer declared ->
  ``DROP INDEX``;
* a type or nullability change -> ``ALTER COLUMN`` on PostgreSQL (tightening to ``NOT
  NULL`` only when no row holds a NULL), a warning on SQLite, which cannot alter columns;
* an undeclared column -> ``DROP COLUMN`` only with ``drop_columns``, a warning otherwise;
* foreign keys of existing columns are diffed on PostgreSQL: a missing one -> ``ADD
  CONSTRAINT "<table>_<col>_fkey"``; one that references another table or column, or
  deletes differently -> ``DROP CONSTRAINT`` then ``ADD CONSTRAINT``; a toolkit-named one
  (``<table>_<col>_fkey``) on a column that no longer declares it -> ``DROP CONSTRAINT``.
  SQLite cannot alter constraints: a difference there is a warning.

Every statement carries its inverse for ``db rollback``; ``CREATE TABLE`` and ``CREATE
SCHEMA`` have none and are never reversed. Default values of existing columns are not
diffed. Every table is in the connection's schema (see the ``sql`` backend).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import live
from .desired import (
    DesiredColumn,
    DesiredForeignKey,
    DesiredIndex,
    DesiredSchema,
    DesiredTable,
)
from .target import Connection

__all__ = ["Plan", "Statement", "plan"]


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement to apply, with what undoes it (``None``: never reversed)."""

    kind: str
    sql: str
    inverse: str | None
    #: A short human description: ``add column notes.priority``.
    summary: str


@dataclass(slots=True)
class Plan:
    """The statements to apply, in order, and the warnings found while diffing."""

    statements: list[Statement] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


_PG_TYPES = {
    "timestamptz": "timestamp with time zone",
    "int": "integer",
    "int4": "integer",
    "int8": "bigint",
    "bool": "boolean",
    "float8": "double precision",
    "float4": "real",
}
_VARCHAR = re.compile(r"varchar\((\d+)\)")


def same_type(dialect: str, declared: str, actual: str) -> bool:
    """Tell whether a declared column type and the live one are the same type."""
    if dialect == "sqlite":
        return declared.replace(" ", "").upper() == actual.replace(" ", "").upper()
    text = declared.strip().lower()
    match = _VARCHAR.fullmatch(text)
    canonical = f"character varying({match.group(1)})" if match else _PG_TYPES.get(text, text)
    return canonical == actual.strip().lower()


def _same_fk(want: DesiredForeignKey, have: live.LiveForeignKey) -> bool:
    """Tell whether a live foreign key is the declared one (table, column, ON DELETE)."""
    column = not have.column or not want.column or have.column == want.column
    return have.table == want.table and column and have.on_delete == want.on_delete


class _Planner:
    def __init__(self, desired: DesiredSchema, conn: Connection | None, drop_columns: bool):
        self.desired = desired
        self.conn = conn
        self.dialect = desired.dialect
        self.drop_columns = drop_columns
        self.plan = Plan()

    def add(self, kind: str, sql: str, inverse: str | None, summary: str) -> None:
        self.plan.statements.append(Statement(kind, sql, inverse, summary))

    def warn(self, message: str) -> None:
        self.plan.warnings.append(message)

    # ------------------------------------------------------------------ the plan

    def run(self) -> Plan:
        tables = self.desired.tables
        present = {t.entity for t in tables if live.table_exists(self.conn, t.name)}
        created: set[str] = set(present)
        new_indexes: list[tuple[DesiredTable, DesiredIndex]] = []
        deferred: list[tuple[DesiredTable, str]] = []
        for table in tables:
            if table.entity in present:
                assert self.conn is not None
                self.diff_table(table, live.read_table(self.conn, table.name))
                continue
            sql, later = self.desired.create_table(table, created)
            created.add(table.entity)
            self.add("create_table", sql, None, f"create table {self.label(table)}")
            new_indexes.extend((table, index) for index in table.indexes)
            deferred.extend((table, fk) for fk in later)
        for table, index in new_indexes:
            self.create_index(table, index)
        for table, sql in deferred:
            name = re.search(r'ADD CONSTRAINT ("(?:[^"]|"")+")', sql)
            inverse = (
                f"ALTER TABLE {table.qualified} DROP CONSTRAINT IF EXISTS {name.group(1)}"
                if name
                else None
            )
            self.add("add_foreign_key", sql, inverse, f"add foreign key on {self.label(table)}")
        return self.plan

    def label(self, table: DesiredTable) -> str:
        return table.name

    # ------------------------------------------------------------------ indexes

    def index_ref(self, table: DesiredTable, name: str) -> str:
        return _q(name)

    def create_index(self, table: DesiredTable, index: DesiredIndex) -> None:
        self.add(
            "create_index",
            index.create_sql.rstrip(";"),
            f"DROP INDEX IF EXISTS {self.index_ref(table, index.name)}",
            f"create index {index.name}",
        )

    # ------------------------------------------------------------------ existing tables

    def diff_table(self, table: DesiredTable, found: live.LiveTable) -> None:
        label = self.label(table)
        declared = {c.name for c in table.columns}
        renamed_sources: set[str] = set()
        empty: bool | None = None
        for column in table.columns:
            old = column.renamed_from
            if column.name in found.columns:
                self.diff_column(table, column, found.columns[column.name])
                if old and old in found.columns:
                    self.warn(
                        f"{label}: both {old} and {column.name} exist; "
                        f"@renamed_from({old}) left alone"
                    )
                    renamed_sources.add(old)
                continue
            if old and old in found.columns and old not in declared:
                renamed_sources.add(old)
                self.add(
                    "rename_column",
                    f"ALTER TABLE {table.qualified} RENAME COLUMN {_q(old)} TO {_q(column.name)}",
                    f"ALTER TABLE {table.qualified} RENAME COLUMN {_q(column.name)} TO {_q(old)}",
                    f"rename column {label}.{old} -> {column.name}",
                )
                self.diff_column(table, column, found.columns[old])
                continue
            if empty is None:
                empty = self.dialect == "postgres" and not self.conn.value(  # type: ignore[union-attr]
                    f"SELECT EXISTS (SELECT 1 FROM {table.qualified})"
                )
            self.add_column(table, column, empty=bool(empty))
        for name, column in found.columns.items():
            if name in declared or name in renamed_sources:
                continue
            if not self.drop_columns:
                self.warn(
                    f"{label}.{name}: column is not declared in the schema "
                    "(kept; --drop-columns drops it)"
                )
                continue
            self.add(
                "drop_column",
                f"ALTER TABLE {table.qualified} DROP COLUMN {_q(name)}",
                f"ALTER TABLE {table.qualified} ADD COLUMN {_q(name)} {column.type}",
                f"drop column {label}.{name}",
            )
        self.diff_foreign_keys(table, found, renamed_sources)
        wanted = {index.name for index in table.indexes}
        for index in table.indexes:
            if index.name not in found.indexes:
                self.create_index(table, index)
        for name, index in found.indexes.items():
            ours = name.startswith(f"{table.name}_") and name.endswith("_idx")
            if ours and name not in wanted and index.sql:
                self.add(
                    "drop_index",
                    f"DROP INDEX IF EXISTS {self.index_ref(table, name)}",
                    index.sql,
                    f"drop index {name}",
                )

    def diff_foreign_keys(
        self, table: DesiredTable, found: live.LiveTable, renamed: set[str]
    ) -> None:
        """Add, replace or drop the foreign keys of columns that already existed."""
        label = self.label(table)
        declared = {c.name: c for c in table.columns}
        for column in table.columns:
            source = column.name if column.name in found.columns else column.renamed_from
            if source not in found.columns:
                continue  # added by this plan, with its REFERENCES
            want, have = column.foreign_key, found.foreign_keys.get(source)
            if want is None or (have is not None and _same_fk(want, have)):
                continue
            if self.dialect == "sqlite":
                self.warn(
                    f"{label}.{column.name}: the foreign key differs from the schema; "
                    "SQLite cannot alter a constraint, left as is"
                )
                continue
            if have is not None:
                self.drop_foreign_key(table, column.name, have)
            name = _q(f"{table.name}_{column.name}_fkey")
            self.add(
                "add_foreign_key",
                f"ALTER TABLE {table.qualified} ADD CONSTRAINT {name} FOREIGN KEY "
                f"({_q(column.name)}) {column.references}",
                f"ALTER TABLE {table.qualified} DROP CONSTRAINT IF EXISTS {name}",
                f"add foreign key {label}.{column.name}",
            )
        for source, have in found.foreign_keys.items():
            column = declared.get(source)
            if column is None or source in renamed or column.foreign_key is not None:
                continue  # an undeclared column keeps what it has (see --drop-columns)
            if self.dialect == "postgres" and have.name == f"{table.name}_{source}_fkey":
                self.drop_foreign_key(table, source, have)

    def drop_foreign_key(self, table: DesiredTable, column: str, have: live.LiveForeignKey) -> None:
        self.add(
            "drop_foreign_key",
            f"ALTER TABLE {table.qualified} DROP CONSTRAINT {_q(have.name)}",
            f"ALTER TABLE {table.qualified} ADD CONSTRAINT {_q(have.name)} {have.definition}",
            f"drop foreign key {self.label(table)}.{column} -> {have.table}",
        )

    def add_column(self, table: DesiredTable, column: DesiredColumn, *, empty: bool) -> None:
        label = f"{self.label(table)}.{column.name}"
        parts = [_q(column.name), column.type]
        default = column.default
        if default is not None and column.default_is_expression and self.dialect == "sqlite":
            self.warn(
                f"{label}: SQLite cannot add a column with an expression default; added without it"
            )
            default = None
        if not column.nullable:
            if default is not None or empty:
                parts.append("NOT NULL")
            else:
                self.warn(
                    f"{label}: added as nullable (existing rows have no value and the "
                    "schema declares no default)"
                )
        if default is not None:
            parts.append(f"DEFAULT {default}")
        if column.check:
            parts.append(column.check)
        if column.references:
            parts.append(column.references)
        self.add(
            "add_column",
            f"ALTER TABLE {table.qualified} ADD COLUMN {' '.join(parts)}",
            f"ALTER TABLE {table.qualified} DROP COLUMN {_q(column.name)}",
            f"add column {label}",
        )
        if column.unique:
            name = f"{table.name}_{column.name}_key"
            self.add(
                "create_index",
                f"CREATE UNIQUE INDEX IF NOT EXISTS {_q(name)} ON {table.qualified} "
                f"({_q(column.name)})",
                f"DROP INDEX IF EXISTS {self.index_ref(table, name)}",
                f"create index {name}",
            )

    def diff_column(
        self, table: DesiredTable, column: DesiredColumn, found: live.LiveColumn
    ) -> None:
        label = f"{self.label(table)}.{column.name}"
        col = f"ALTER TABLE {table.qualified} ALTER COLUMN {_q(column.name)}"
        if not same_type(self.dialect, column.type, found.type):
            if self.dialect == "postgres":
                self.add(
                    "alter_type",
                    f"{col} TYPE {column.type} USING {_q(column.name)}::{column.type}",
                    f"{col} TYPE {found.type} USING {_q(column.name)}::{found.type}",
                    f"alter column {label} type {found.type} -> {column.type}",
                )
            else:
                self.warn(
                    f"{label}: type differs (database {found.type}, schema {column.type}); "
                    "SQLite cannot alter a column, left as is"
                )
        if column.nullable == found.nullable:
            return
        if self.dialect == "sqlite":
            want = "nullable" if column.nullable else "NOT NULL"
            self.warn(f"{label}: the schema wants it {want}; SQLite cannot alter a column")
        elif column.nullable:
            self.add(
                "drop_not_null",
                f"{col} DROP NOT NULL",
                f"{col} SET NOT NULL",
                f"alter column {label} drop not null",
            )
        elif self.conn is not None and self.conn.value(
            f"SELECT EXISTS (SELECT 1 FROM {table.qualified} WHERE {_q(found.name)} IS NULL)"
        ):
            self.warn(f"{label}: has NULL values; fill them, then re-run to set NOT NULL")
        else:
            self.add(
                "set_not_null",
                f"{col} SET NOT NULL",
                f"{col} DROP NOT NULL",
                f"alter column {label} set not null",
            )


def plan(desired: DesiredSchema, conn: Connection | None, *, drop_columns: bool = False) -> Plan:
    """Return the statements that bring the database at ``conn`` to ``desired``.

    ``conn`` ``None`` means an empty database (the full bootstrap).
    """
    return _Planner(desired, conn, drop_columns).run()

"""The schema as the database should look: tables, columns and indexes, per dialect.

Built from a validated ``toolkit_codegen`` schema with the ``sql`` backend's own renderer,
so a table created here is byte-for-byte the ``CREATE TABLE`` that ``toolkit compile
--backend sql`` writes, and a column added later has the same type, default, ``CHECK``
and ``REFERENCES`` as if it had been there from the start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DesiredColumn", "DesiredIndex", "DesiredSchema", "DesiredTable", "desired_schema"]


@dataclass(frozen=True, slots=True)
class DesiredColumn:
    """One column the schema declares."""

    name: str
    #: The dialect's type as the renderer writes it (``varchar(200)``, ``TEXT``).
    type: str
    nullable: bool
    #: The SQL of ``@default(...)``, or ``None``.
    default: str | None
    #: ``now()`` and friends: SQLite cannot ``ADD COLUMN`` with an expression default.
    default_is_expression: bool
    unique: bool
    #: ``CHECK (...)`` for enums, or ``""``.
    check: str
    #: ``REFERENCES ... ON DELETE ...`` for a foreign key, or ``""``.
    references: str
    renamed_from: str | None


@dataclass(frozen=True, slots=True)
class DesiredIndex:
    """A declared ``index(...)`` (or the unique index of an ``@unique`` field)."""

    name: str
    columns: tuple[str, ...]
    unique: bool
    create_sql: str


@dataclass(slots=True)
class DesiredTable:
    """One entity's table."""

    entity: str
    #: PostgreSQL schema (``public`` for the root module); ``""`` on SQLite.
    db_schema: str
    name: str
    #: The quoted, on PostgreSQL schema-qualified, name.
    qualified: str
    columns: list[DesiredColumn] = field(default_factory=list)
    indexes: list[DesiredIndex] = field(default_factory=list)


@dataclass(slots=True)
class DesiredSchema:
    """Every table, parents before children, and the renderer that drew them."""

    dialect: str
    tables: list[DesiredTable]
    renderer: Any

    def create_table(self, table: DesiredTable, existing: set[str]) -> tuple[str, list[str]]:
        """Return ``CREATE TABLE`` for ``table`` and the foreign keys it must add later.

        ``existing`` holds the entity names whose tables exist (or are created earlier in
        the same plan): on PostgreSQL a reference to any other table is deferred to a
        guarded ``ALTER TABLE ... ADD CONSTRAINT`` once every table exists.
        """
        renderer = self.renderer
        entity = renderer.entities[table.entity]
        deferred: list[str] = []
        sql = renderer.create_table(entity, set(existing) | {table.entity}, deferred)
        return sql.strip().rstrip(";"), [fk.rstrip(";") for fk in deferred]


def desired_schema(schema: Any, dialect: str) -> DesiredSchema:
    """Describe ``schema`` (a validated ``toolkit_codegen`` Schema) for ``dialect``."""
    from toolkit_codegen.backends.sql import SqlRenderer, quote_ident

    renderer = SqlRenderer(schema, dialect)
    tables: list[DesiredTable] = []
    for entity in renderer.ordered():
        db_schema = renderer.db_schemas[entity.name] if dialect == "postgres" else ""
        table = DesiredTable(entity.name, db_schema, entity.table_name, renderer.table(entity))
        fks = renderer.foreign_keys[entity.name]
        declared = {f.name for f in entity.fields}
        columns: list[tuple[str, Any, Any]] = [(f.name, f.type, f) for f in entity.fields]
        for fk in fks.values():
            if fk.column not in declared:
                columns.append((fk.column, renderer.key_type(fk.target), None))
        for name, typ, fld in columns:
            fk = fks.get(name)
            values = renderer.enum_values(typ)
            default = None
            expression = False
            if fld is not None and fld.default is not None:
                default = renderer.default(fld)
                expression = fld.default.kind == "now"
            check = ""
            if values:
                listed = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
                check = f"CHECK ({quote_ident(name)} IN ({listed}))"
            table.columns.append(
                DesiredColumn(
                    name=name,
                    type=renderer.column_type(typ, fld),
                    nullable=typ.optional or (fk is not None and fk.on_delete == "set_null"),
                    default=default,
                    default_is_expression=expression,
                    unique=bool(fld is not None and fld.unique and not fld.primary),
                    check=check,
                    references=renderer.references(fk) if fk is not None else "",
                    renamed_from=fld.renamed_from if fld is not None else None,
                )
            )
        for index, sql in zip(entity.indexes, renderer.create_indexes(entity), strict=True):
            suffix = "key" if index.unique else "idx"
            table.indexes.append(
                DesiredIndex(
                    f"{entity.table_name}_{'_'.join(index.columns)}_{suffix}",
                    tuple(index.columns),
                    index.unique,
                    sql,
                )
            )
        tables.append(table)
    return DesiredSchema(dialect, tables, renderer)

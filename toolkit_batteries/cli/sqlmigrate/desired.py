"""The schema as the database should look: tables, columns and indexes, per dialect.

Built from a validated ``toolkit_codegen`` schema with the ``sql`` backend's own renderer
(entity tables, then many-to-many join tables; every table in the connection's schema),
so a table created here is byte-for-byte the ``CREATE TABLE`` that ``toolkit compile
--backend sql`` writes, and a column added later has the same type, default, ``CHECK``
and ``REFERENCES`` as if it had been there from the start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DesiredColumn",
    "DesiredForeignKey",
    "DesiredIndex",
    "DesiredSchema",
    "DesiredTable",
    "desired_schema",
]


@dataclass(frozen=True, slots=True)
class DesiredForeignKey:
    """The foreign key a column declares: the table and column it references."""

    table: str
    column: str
    #: ``RESTRICT``, ``CASCADE`` or ``SET NULL``.
    on_delete: str


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
    foreign_key: DesiredForeignKey | None = None


@dataclass(frozen=True, slots=True)
class DesiredIndex:
    """A declared ``index(...)`` or the index of a foreign-key column."""

    name: str
    columns: tuple[str, ...]
    unique: bool
    create_sql: str


@dataclass(slots=True)
class DesiredTable:
    """One entity's table, or a many-to-many join table."""

    #: The entity name, or the join table's name for a join table.
    entity: str
    name: str
    #: The quoted name (never schema-qualified: the connection's schema).
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
        guarded ``ALTER TABLE ... ADD CONSTRAINT`` once every table exists. Join tables
        come after every entity table and reference them inline.
        """
        renderer = self.renderer
        if table.entity not in renderer.entities:
            join = next(j for j in renderer.join_tables if j.name == table.entity)
            return renderer.create_join_table(join).strip().rstrip(";"), []
        entity = renderer.entities[table.entity]
        deferred: list[str] = []
        sql = renderer.create_table(entity, set(existing) | {table.entity}, deferred)
        return sql.strip().rstrip(";"), [fk.rstrip(";") for fk in deferred]


def _foreign_key(renderer: Any, fk: Any) -> DesiredForeignKey:
    keys = fk.target.primary_fields
    column = keys[0].name if len(keys) == 1 else ""
    on_delete = {"restrict": "RESTRICT", "cascade": "CASCADE", "set_null": "SET NULL"}
    return DesiredForeignKey(fk.target.table_name, column, on_delete[fk.on_delete])


def _indexes(specs: list[Any]) -> list[DesiredIndex]:
    return [DesiredIndex(i.name, i.columns, i.unique, i.sql) for i in specs]


def desired_schema(schema: Any, dialect: str) -> DesiredSchema:
    """Describe ``schema`` (a validated ``toolkit_codegen`` Schema) for ``dialect``."""
    from toolkit_codegen.backends.sql import SqlRenderer, _ForeignKey, quote_ident

    renderer = SqlRenderer(schema, dialect)
    tables: list[DesiredTable] = []
    for entity in renderer.ordered():
        table = DesiredTable(entity.name, entity.table_name, renderer.table(entity))
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
                    foreign_key=_foreign_key(renderer, fk) if fk is not None else None,
                )
            )
        table.indexes.extend(_indexes(renderer.indexes(entity)))
        tables.append(table)
    for join in renderer.join_tables:
        table = DesiredTable(join.name, join.name, quote_ident(join.name))
        id_type = "bigint" if dialect == "postgres" else "INTEGER"
        table.columns.append(DesiredColumn("id", id_type, False, None, False, False, "", "", None))
        targets = {join.owner_column: join.owner, join.target_column: join.target}
        for column, typ, references in renderer.join_columns(join):
            fk = _ForeignKey(column, targets[column], "cascade")
            table.columns.append(
                DesiredColumn(
                    column,
                    typ,
                    False,
                    None,
                    False,
                    False,
                    "",
                    references,
                    None,
                    _foreign_key(renderer, fk),
                )
            )
        table.indexes.extend(_indexes(renderer.join_indexes(join)))
        tables.append(table)
    return DesiredSchema(dialect, tables, renderer)

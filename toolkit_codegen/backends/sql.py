"""The ``sql`` backend: the migration schema as plain DDL, for PostgreSQL and SQLite.

One file per dialect in ``BackendOptions.sql_dialects``: ``postgres/schema.sql`` and
``sqlite/schema.sql`` (``compile`` writes them under ``sql/``). The script is idempotent
(``IF NOT EXISTS`` everywhere, late foreign keys guarded by ``DO`` blocks), so it can
bootstrap an empty database or be re-run.

Shape (the spec's rules, extended as the original toolkit's atlas backend does):

- Every table lives in the connection's schema (the first one on PostgreSQL's
  ``search_path``, ``public`` by default), whatever its module or ``@schema``: table names
  are never schema-qualified and no ``CREATE SCHEMA`` is written. This is the rule the
  Django ``models``/``migrations`` backends follow too (a Django model has one
  ``db_table`` on every database), so the two database outputs build the same tables; put
  an app in another PostgreSQL schema with the connection's ``search_path``.
- One ``CREATE TABLE IF NOT EXISTS`` per entity (table = plural snake-case name), parents
  before children (foreign-key order; declaration order breaks ties and cycles).
- Column line: ``"col" TYPE [NOT NULL] [DEFAULT x] [UNIQUE] [CHECK (...)]
  [REFERENCES "t" ("pk") ON DELETE ...]``. Every column is ``NOT NULL`` unless the field is
  optional or its foreign key is ``@on_delete(set_null)``. The primary key is a trailing
  ``PRIMARY KEY (...)`` constraint over the ``@primary`` fields.
- One join table per ``many_to_many`` pair (``join_table:``, else ``<table>_<relation>``,
  owned by the side declared first), shaped as Django's auto-created through table:
  ``id`` bigint identity primary key, ``<owner>_id`` and ``<target>_id`` (lower-case
  entity names; ``from_<x>_id`` / ``to_<x>_id`` when an entity relates to itself), both
  ``NOT NULL REFERENCES ... ON DELETE CASCADE``, and ``UNIQUE`` over the pair.
- Then ``CREATE [UNIQUE] INDEX IF NOT EXISTS "<table>_<cols>_idx"`` (``_key`` when unique)
  per ``index(...)``, and ``"<table>_<col>_idx"`` on every foreign-key column that is not
  unique (Django indexes each ``ForeignKey`` column).

Foreign keys come from ``belongs_to`` (on the declaring entity; the column is
``@foreign_key`` or ``<relation>_id``) and ``has_one`` / ``has_many`` naming a key (on the
target). On PostgreSQL a foreign key that closes a cycle is added after every table
exists, with ``ALTER TABLE ... ADD CONSTRAINT`` inside a ``DO`` block that ignores a second
run. The ``ON DELETE`` action is the database's here; Django emulates it in Python and
declares its constraints without one, so the catalogs agree on every foreign key's columns
and target but not on that action.

Two types differ from the original toolkit on purpose, so that this DDL and the tables the
Django migrations build are the same (a test compares the PostgreSQL catalogs): enums,
named or inline, are ``text`` with a ``CHECK`` on both dialects (no PostgreSQL enum type,
which Django cannot migrate), and ``float32`` is ``double precision``, the column of
Django's ``FloatField`` and the precision of a Python ``float``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..escaping import sql_identifier, sql_string
from ..nodes import Entity, Enum, Field, Schema, TypeRef
from . import GENERATED_NOTICE, BackendOptions

__all__ = ["DIALECTS", "IndexSpec", "JoinTable", "SqlRenderer", "generate", "render_ddl"]

DIALECTS: tuple[str, ...] = ("postgres", "sqlite")

#: Scalar -> column type, per dialect (``string`` with ``max_len`` becomes varchar(N)).
_TYPES: dict[str, dict[str, str]] = {
    "postgres": {
        "uuid": "uuid",
        "string": "text",
        "int32": "integer",
        "int64": "bigint",
        "float32": "double precision",
        "float64": "double precision",
        "bool": "boolean",
        "timestamp": "timestamptz",
        "date": "date",
        "bytes": "bytea",
        "json": "jsonb",
        "enum": "text",
    },
    "sqlite": {
        "uuid": "TEXT",
        "string": "TEXT",
        "int32": "INTEGER",
        "int64": "INTEGER",
        "float32": "REAL",
        "float64": "REAL",
        "bool": "INTEGER",
        "timestamp": "TEXT",
        "date": "TEXT",
        "bytes": "BLOB",
        "json": "TEXT",
        "enum": "TEXT",
    },
}
_VARCHAR = {"postgres": "varchar({n})", "sqlite": "VARCHAR({n})"}
#: ``@default(now())``: SQLite stores timestamps as ISO-8601 UTC text.
_NOW = {"postgres": "now()", "sqlite": "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"}
_ON_DELETE = {"restrict": "RESTRICT", "cascade": "CASCADE", "set_null": "SET NULL"}


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``<dialect>/schema.sql`` for each dialect in the options."""
    return {
        f"{dialect}/schema.sql": render_ddl(schema, dialect)
        for dialect in dict.fromkeys(options.sql_dialects)
    }


def render_ddl(schema: Schema, dialect: str) -> str:
    """Return the bootstrap DDL of ``schema`` for ``postgres`` or ``sqlite``."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown SQL dialect {dialect!r} (supported: {', '.join(DIALECTS)})")
    return SqlRenderer(schema, dialect).render()


def quote_ident(name: str) -> str:
    """Return ``name`` as a double-quoted SQL identifier (:func:`escaping.sql_identifier`)."""
    return sql_identifier(name)


def quote_literal(value: str) -> str:
    """Return ``value`` as a single-quoted SQL literal (:func:`escaping.sql_string`)."""
    return sql_string(value)


@dataclass(frozen=True, slots=True)
class _ForeignKey:
    """A foreign-key column of one table."""

    column: str
    target: Entity
    on_delete: str


@dataclass(frozen=True, slots=True)
class JoinTable:
    """The join table of one ``many_to_many`` pair."""

    name: str
    owner: Entity
    target: Entity
    #: ``<owner>_id`` and ``<target>_id`` (``from_``/``to_`` prefixed for a self-relation).
    owner_column: str
    target_column: str


@dataclass(frozen=True, slots=True)
class IndexSpec:
    """One index the script creates: declared (``index(...)``) or on a foreign key."""

    name: str
    columns: tuple[str, ...]
    unique: bool
    sql: str


class SqlRenderer:
    """Renders one dialect; keeps the lookups it needs for the whole schema.

    Public because ``toolkit db migrate`` diffs a live database against the same column
    types this renderer writes, so an added column matches the bootstrap DDL exactly.
    """

    def __init__(self, schema: Schema, dialect: str) -> None:
        self.schema = schema
        self.dialect = dialect
        self.entities: dict[str, Entity] = {}
        for module in schema.modules:
            for entity in module.entities:
                self.entities.setdefault(entity.name, entity)
        self.enums: dict[str, Enum] = {}
        for enum in schema.enums:
            self.enums.setdefault(enum.name, enum)
        self.foreign_keys = self._collect_foreign_keys()
        self.join_tables = self._collect_join_tables()
        from .crud import listed_orders

        #: Entity -> the keyset order of its generated CRUD list (indexed, as in the model).
        self.list_orders = listed_orders(schema)

    # -- lookups ------------------------------------------------------------------------

    def _collect_foreign_keys(self) -> dict[str, dict[str, _ForeignKey]]:
        """Return ``{entity: {column: fk}}`` from belongs_to and has_one relations."""
        out: dict[str, dict[str, _ForeignKey]] = {name: {} for name in self.entities}
        for entity in self.entities.values():
            for rel in entity.relations:
                target = self.entities.get(rel.target)
                if rel.kind == "belongs_to" and target is not None:
                    column = rel.foreign_key or f"{rel.name}_id"
                    out[entity.name][column] = _ForeignKey(column, target, rel.on_delete)
        # has_one / has_many put the key on the target; its belongs_to side, when
        # declared, wins (as in the Django models).
        for entity in self.entities.values():
            for rel in entity.relations:
                if rel.kind in ("has_one", "has_many") and rel.foreign_key and rel.target in out:
                    out[rel.target].setdefault(
                        rel.foreign_key, _ForeignKey(rel.foreign_key, entity, rel.on_delete)
                    )
        return out

    def _collect_join_tables(self) -> list[JoinTable]:
        """Return one join table per ``many_to_many`` pair, owned by the first-declared side."""
        out: dict[str, JoinTable] = {}
        for entity in self.entities.values():
            for rel in entity.relations:
                target = self.entities.get(rel.target)
                if rel.kind != "many_to_many" or target is None:
                    continue
                name = rel.join_table or f"{entity.table_name}_{rel.name}"
                if name in out:
                    continue  # the other side already owns it
                owner, other = entity.name.lower(), target.name.lower()
                if owner == other:
                    owner, other = f"from_{owner}", f"to_{other}"
                out[name] = JoinTable(name, entity, target, f"{owner}_id", f"{other}_id")
        return list(out.values())

    def table(self, entity: Entity) -> str:
        """Return the quoted table name (never schema-qualified: the connection's schema)."""
        return quote_ident(entity.table_name)

    # -- ordering -----------------------------------------------------------------------

    def ordered(self) -> list[Entity]:
        """Return entities parents first; declaration order on ties and cycles."""
        pending = list(self.entities.values())
        done: set[str] = set()
        order: list[Entity] = []
        while pending:
            ready = next(
                (
                    e
                    for e in pending
                    if all(
                        fk.target.name in done or fk.target.name == e.name
                        for fk in self.foreign_keys[e.name].values()
                    )
                ),
                pending[0],  # a cycle: take the first declared
            )
            pending.remove(ready)
            done.add(ready.name)
            order.append(ready)
        return order

    # -- rendering ----------------------------------------------------------------------

    def render(self) -> str:
        """Return the whole script."""
        parts = [f"-- {GENERATED_NOTICE}\n-- Dialect: {self.dialect}.\n"]
        created: set[str] = set()
        deferred: list[str] = []
        ordered = self.ordered()
        for entity in ordered:
            created.add(entity.name)
            parts.append(self.create_table(entity, created, deferred))
        for join in self.join_tables:
            parts.append(self.create_join_table(join))
        indexes = [line for e in ordered for line in self.create_indexes(e)]
        indexes += [i.sql for j in self.join_tables for i in self.join_indexes(j)]
        if indexes:
            parts.append("\n".join(indexes) + "\n")
        if deferred:
            parts.append("\n".join(deferred) + "\n")
        return "\n".join(parts)

    def create_table(self, entity: Entity, created: set[str], deferred: list[str]) -> str:
        """Return one CREATE TABLE; cyclic PostgreSQL foreign keys go to ``deferred``."""
        fks = self.foreign_keys[entity.name]
        lines: list[str] = []
        declared = {f.name for f in entity.fields}
        columns: list[tuple[str, TypeRef, Field | None]] = [
            (f.name, f.type, f) for f in entity.fields
        ]
        # A foreign key naming an undeclared column still needs that column.
        for fk in fks.values():
            if fk.column not in declared:
                columns.append((fk.column, self.key_type(fk.target), None))
        for name, typ, fld in columns:
            fk = fks.get(name)
            inline_fk = fk is not None and (self.dialect == "sqlite" or fk.target.name in created)
            lines.append("  " + self.column(entity, name, typ, fld, fk if inline_fk else None))
            if fk is not None and not inline_fk:
                deferred.append(self.alter_foreign_key(entity, fk))
        primary = [quote_ident(f.name) for f in entity.primary_fields]
        if primary:
            lines.append(f"  PRIMARY KEY ({', '.join(primary)})")
        body = ",\n".join(lines)
        return f"CREATE TABLE IF NOT EXISTS {self.table(entity)} (\n{body}\n);\n"

    def key_type(self, target: Entity) -> TypeRef:
        """Return the type a foreign key to ``target`` takes (its first primary field's)."""
        keys = target.primary_fields
        if keys:
            return TypeRef(keys[0].type.name, keys[0].pos)
        return TypeRef("uuid", target.pos)

    def column_type(self, typ: TypeRef, fld: Field | None) -> str:
        """Return the dialect's column type of a field."""
        types = _TYPES[self.dialect]
        if typ.is_list:
            # A PostgreSQL array of the element's column type; a JSON array on SQLite.
            if self.dialect == "postgres":
                return f"{types[typ.name]}[]"
            return "TEXT"
        if typ.is_inline_enum:
            return types["enum"]
        if typ.is_scalar:
            max_len = fld.max_len if fld is not None else None
            if typ.name == "string" and max_len is not None:
                return _VARCHAR[self.dialect].format(n=max_len)
            return types[typ.name]
        if typ.name not in self.enums:
            return types["json"]  # a message stored whole
        return types["enum"]

    def column(
        self,
        entity: Entity,
        name: str,
        typ: TypeRef,
        fld: Field | None,
        fk: _ForeignKey | None,
    ) -> str:
        """Return one column definition."""
        parts = [quote_ident(name), self.column_type(typ, fld)]
        owning_fk = self.foreign_keys[entity.name].get(name)
        nullable = typ.optional or (owning_fk is not None and owning_fk.on_delete == "set_null")
        if not nullable:
            parts.append("NOT NULL")
        if fld is not None and fld.default is not None:
            parts.append(f"DEFAULT {self.default(fld)}")
        if fld is not None and fld.unique and not fld.primary:
            parts.append("UNIQUE")
        values = self.enum_values(typ)
        if values:
            listed = ", ".join(quote_literal(v) for v in values)
            parts.append(f"CHECK ({quote_ident(name)} IN ({listed}))")
        if fk is not None:
            parts.append(self.references(fk))
        return " ".join(parts)

    def enum_values(self, typ: TypeRef) -> tuple[str, ...]:
        """Return the allowed values of an enum-typed field (empty for other types)."""
        if typ.is_inline_enum:
            return typ.enum_values
        named = None if typ.is_scalar else self.enums.get(typ.name)
        return named.values if named is not None else ()

    def default(self, fld: Field) -> str:
        """Return the SQL of a field's ``@default``."""
        assert fld.default is not None
        value = fld.default.value
        if fld.default.kind == "now":
            return _NOW[self.dialect]
        if isinstance(value, bool):
            if self.dialect == "postgres":
                return "true" if value else "false"
            return "1" if value else "0"
        if isinstance(value, int | float):
            return repr(value)
        return quote_literal(str(value))

    def references(self, fk: _ForeignKey) -> str:
        """Return ``REFERENCES "t" ("pk") ON DELETE ...``."""
        keys = fk.target.primary_fields
        cols = f" ({quote_ident(keys[0].name)})" if len(keys) == 1 else ""
        return f"REFERENCES {self.table(fk.target)}{cols} ON DELETE {_ON_DELETE[fk.on_delete]}"

    def alter_foreign_key(self, entity: Entity, fk: _ForeignKey) -> str:
        """Return the guarded ALTER TABLE that adds a foreign key closing a cycle."""
        name = quote_ident(f"{entity.table_name}_{fk.column}_fkey")
        return (
            f"DO $$ BEGIN ALTER TABLE {self.table(entity)} ADD CONSTRAINT {name} "
            f"FOREIGN KEY ({quote_ident(fk.column)}) {self.references(fk)}; "
            "EXCEPTION WHEN duplicate_object THEN null; END $$;"
        )

    def create_indexes(self, entity: Entity) -> list[str]:
        """Return the CREATE INDEX statements of an entity (declared, then foreign keys)."""
        return [index.sql for index in self.indexes(entity)]

    def _index(self, table: str, columns: tuple[str, ...], unique: bool) -> IndexSpec:
        suffix = "key" if unique else "idx"
        name = f"{table}_{'_'.join(columns)}_{suffix}"
        cols = ", ".join(quote_ident(c) for c in columns)
        sql = (
            f"CREATE {'UNIQUE ' if unique else ''}INDEX IF NOT EXISTS {quote_ident(name)} "
            f"ON {quote_ident(table)} ({cols});"
        )
        return IndexSpec(name, columns, unique, sql)

    def indexes(self, entity: Entity) -> list[IndexSpec]:
        """Return an entity's ``index(...)`` lines, its list order's, one per non-unique FK."""
        out = [self._index(entity.table_name, tuple(i.columns), i.unique) for i in entity.indexes]
        order = self.list_orders.get(entity.name)
        if order is not None and not any(i.columns[: len(order)] == order for i in out):
            # The generated list's keyset order, as the Django model declares it.
            out.append(self._index(entity.table_name, order, False))
        names = {i.name for i in out}
        unique = {f.name for f in entity.fields if f.unique or f.primary}
        for column in self.foreign_keys[entity.name]:
            spec = self._index(entity.table_name, (column,), False)
            if column not in unique and spec.name not in names:
                out.append(spec)
        return out

    def join_indexes(self, join: JoinTable) -> list[IndexSpec]:
        """Return the indexes of a join table's two foreign-key columns."""
        return [
            self._index(join.name, (join.owner_column,), False),
            self._index(join.name, (join.target_column,), False),
        ]

    def join_columns(self, join: JoinTable) -> list[tuple[str, str, str]]:
        """Return ``(column, type, REFERENCES ...)`` of a join table's two key columns."""
        out = []
        for column, target in ((join.owner_column, join.owner), (join.target_column, join.target)):
            typ = self.column_type(self.key_type(target), None)
            out.append((column, typ, self.references(_ForeignKey(column, target, "cascade"))))
        return out

    def create_join_table(self, join: JoinTable) -> str:
        """Return the CREATE TABLE of a join table (Django's auto-created through shape)."""
        if self.dialect == "postgres":
            lines = ['  "id" bigint GENERATED BY DEFAULT AS IDENTITY']
        else:
            lines = ['  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT']
        for column, typ, references in self.join_columns(join):
            lines.append(f"  {quote_ident(column)} {typ} NOT NULL {references}")
        if self.dialect == "postgres":
            lines.append('  PRIMARY KEY ("id")')
        pair = f"{quote_ident(join.owner_column)}, {quote_ident(join.target_column)}"
        lines.append(f"  UNIQUE ({pair})")
        body = ",\n".join(lines)
        return f"CREATE TABLE IF NOT EXISTS {quote_ident(join.name)} (\n{body}\n);\n"

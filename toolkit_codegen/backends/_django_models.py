"""Django model descriptions of a schema, shared by the ``models`` and ``migrations`` backends.

One :class:`ModelSpec` per entity says which Django fields it has and with which
arguments. The ``models`` backend renders it as Python source; the ``migrations`` backend
builds the same fields as objects (a :class:`~django.db.migrations.state.ModelState`) and
lets Django's autodetector compare them with the existing migrations. Both reading one
description is what keeps ``generated/models.py`` and the migrations in step, so
``manage.py makemigrations --check`` finds nothing to do after a compile.

Mapping decisions (docs/compiler.md):

- ``uuid`` ``UUIDField`` (a uuid primary key gets ``default=uuid.uuid4``); ``string``
  ``CharField(max_length=N)`` with ``@validate(max_len: N)``, else ``TextField``; ``bool``
  ``BooleanField``; ``bytes`` ``BinaryField``; ``json`` ``JSONField``; ``int32``
  ``IntegerField``; ``int64`` ``BigIntegerField``; ``float32``/``float64`` ``FloatField``;
  ``timestamp`` ``DateTimeField``; ``date`` ``DateField``; enums ``TextField`` with choices
  (a named enum is also a ``TextChoices`` class).
- ``?`` is ``null=True, blank=True``; ``@unique`` is ``unique=True``; ``@default(now())`` is
  ``default=timezone.now`` and ``db_default=Now()``; other defaults are ``default=``.
- ``belongs_to x: T @foreign_key(x_id)`` is ``x = ForeignKey("T", db_column="x_id")``. It
  takes the place of a declared ``x_id`` field (whose ``?`` and ``@unique`` it keeps; a unique
  one becomes a ``OneToOneField``), so the column keeps its name. The target's ``has_many`` /
  ``has_one`` naming the same key becomes ``related_name`` (``"+"`` when there is none).
- ``many_to_many`` is a ``ManyToManyField`` on the side declared first, with
  ``db_table=<join_table>``; the other side's relation name becomes its ``related_name``.
- ``index(a, b)`` is a ``models.Index``, ``index(a, b) @unique`` a ``UniqueConstraint``.
- Several ``@primary`` fields form a ``CompositePrimaryKey``; no ``@primary`` at all gets an
  ``id = BigAutoField(primary_key=True)``, so models never depend on ``DEFAULT_AUTO_FIELD``.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import models
from django.db.models.functions import Now
from django.utils import timezone

from ..nodes import Entity, Enum, Field, Relation, Schema, TypeRef
from ..pysource import Call, Expr, List, Lit, Raw
from . import per_schema

__all__ = [
    "EnumSpec",
    "FieldSpec",
    "IndexSpec",
    "ModelSpec",
    "Sym",
    "build_specs",
    "enum_specs",
]

#: Django's limit on ``Index.name``.
INDEX_NAME_MAX = 30
#: PostgreSQL's identifier limit (constraint names).
IDENTIFIER_MAX = 63

_SCALAR_FIELDS = {
    "uuid": "UUIDField",
    "bool": "BooleanField",
    "bytes": "BinaryField",
    "json": "JSONField",
    "int32": "IntegerField",
    "int64": "BigIntegerField",
    "float32": "FloatField",
    "float64": "FloatField",
    "timestamp": "DateTimeField",
    "date": "DateField",
}

_ON_DELETE = {
    "restrict": ("models.RESTRICT", models.RESTRICT),
    "cascade": ("models.CASCADE", models.CASCADE),
    "set_null": ("models.SET_NULL", models.SET_NULL),
}


@dataclass(frozen=True)
class Sym:
    """A value written as code in ``models.py`` and used as an object in migrations."""

    code: str
    value: Any
    #: The import line the code needs (``from django.utils import timezone``).
    needs: str = ""


@dataclass
class FieldSpec:
    """One Django model field."""

    name: str
    cls: str
    #: Positional arguments (the target model of a relation).
    args: list[Any] = field(default_factory=list)
    kwargs: list[tuple[str, Any]] = field(default_factory=list)
    #: Relation target entity (ForeignKey / OneToOneField / ManyToManyField).
    target: str | None = None
    #: A list type's field: the runtime ``modelfields.ListField`` instead of ``models.X``.
    is_list: bool = False

    def expr(self) -> Expr:
        """Return ``models.X(...)`` (``modelfields.ListField(...)``) as code."""
        args = [_code(a) for a in self.args]
        owner = "modelfields" if self.is_list else "models"
        return Call(f"{owner}.{self.cls}", args, [(k, _code(v)) for k, v in self.kwargs])

    def build(self, app_label: str) -> models.Field:
        """Return the field as an unbound Django object (relations point at ``app.Model``)."""
        if self.is_list:
            from ._listfield import ListFieldStandIn

            return ListFieldStandIn(**{k: _value(v) for k, v in self.kwargs})
        cls = getattr(models, self.cls)
        args = [_value(a) for a in self.args]
        if self.target is not None:
            args[0] = f"{app_label}.{self.target}"
        kwargs = {k: _value(v) for k, v in self.kwargs}
        if kwargs.get("primary_key") or self.cls == "CompositePrimaryKey":
            # What Django sets on a model's primary key, so the state equals a model's.
            kwargs["serialize"] = False
        return cls(*args, **kwargs)

    def imports(self) -> set[str]:
        """Return the import lines the rendered field needs."""
        needs = {v.needs for _, v in self.kwargs if isinstance(v, Sym) and v.needs}
        if self.is_list:
            from ._listfield import LIST_FIELD_IMPORT

            needs.add(LIST_FIELD_IMPORT)
        return needs


@dataclass
class IndexSpec:
    """A ``Meta.indexes`` entry, or a ``Meta.constraints`` unique or enum check constraint.

    ``check_in`` holds an enum field's values: the constraint is then
    ``CheckConstraint(condition=Q(<field>__in=[...]))``, the same rule as the ``sql``
    backend's ``CHECK ("col" IN (...))``, so the database refuses an unknown value whichever
    of the two built the table.
    """

    name: str
    fields: tuple[str, ...]
    unique: bool
    check_in: tuple[str, ...] = ()

    @property
    def is_constraint(self) -> bool:
        """Return True for ``Meta.constraints`` entries (unique or check)."""
        return self.unique or bool(self.check_in)

    def expr(self) -> Expr:
        """Return ``models.Index(...)`` / ``UniqueConstraint(...)`` / ``CheckConstraint(...)``."""
        if self.check_in:
            condition = Call("models.Q", (), [(f"{self.fields[0]}__in", List(list(self.check_in)))])
            return Call(
                "models.CheckConstraint", (), [("condition", condition), ("name", self.name)]
            )
        cls = "models.UniqueConstraint" if self.unique else "models.Index"
        return Call(cls, (), [("fields", List(list(self.fields))), ("name", self.name)])

    def build(self) -> models.Index | models.BaseConstraint:
        """Return the Django object."""
        if self.check_in:
            condition = models.Q(**{f"{self.fields[0]}__in": list(self.check_in)})
            return models.CheckConstraint(condition=condition, name=self.name)
        if self.unique:
            return models.UniqueConstraint(fields=list(self.fields), name=self.name)
        return models.Index(fields=list(self.fields), name=self.name)


@dataclass
class ModelSpec:
    """One entity's Django model."""

    entity: Entity
    fields: list[FieldSpec] = field(default_factory=list)
    indexes: list[IndexSpec] = field(default_factory=list)

    @property
    def name(self) -> str:
        """Return the model class name (the entity name)."""
        return self.entity.name

    @property
    def table(self) -> str:
        """Return ``db_table``: the plural snake-case entity name."""
        return self.entity.table_name

    def model_state(self, app_label: str) -> Any:
        """Return the Django ``ModelState`` the migration autodetector compares."""
        from django.db.migrations.state import ModelState

        options: dict[str, Any] = {
            "db_table": self.table,
            "indexes": [i.build() for i in self.indexes if not i.is_constraint],
            "constraints": [i.build() for i in self.indexes if i.is_constraint],
        }
        fields = [(f.name, f.build(app_label)) for f in self.fields]
        return ModelState(app_label, self.name, fields, options, bases=(models.Model,))


@dataclass
class EnumSpec:
    """A named enum rendered as ``models.TextChoices``."""

    name: str
    members: list[tuple[str, str]]

    def member(self, value: str) -> str:
        """Return the member name of ``value``."""
        return next(m for m, v in self.members if v == value)


def _code(value: Any) -> object:
    """Return a field argument as pysource takes it: a plain scalar is passed as it is.

    ``Call`` and ``List`` write a str, int, float, bool or None exactly as ``Lit`` would;
    not wrapping each keyword value of every field in a ``Lit`` saves an object apiece.
    """
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    if isinstance(value, Sym):
        return Raw(value.code)
    if isinstance(value, Expr):
        return value
    if isinstance(value, list):
        return List([_code(v) for v in value])
    return Lit(value)


def _value(value: Any) -> Any:
    if isinstance(value, Sym):
        return value.value
    if isinstance(value, list):
        return [_value(v) for v in value]
    return value


def enum_specs(schema: Schema) -> dict[str, EnumSpec]:
    """Return the ``TextChoices`` class of every named enum."""
    out: dict[str, EnumSpec] = {}
    for enum in schema.enums:
        members: list[tuple[str, str]] = []
        taken: set[str] = set()
        for value in enum.values:
            base = value.upper() if value.isidentifier() else f"V_{len(members)}"
            name, n = base, 2
            while name in taken:
                name, n = f"{base}_{n}", n + 1
            taken.add(name)
            members.append((name, value))
        out[enum.name] = EnumSpec(enum.name, members)
    return out


def short_name(base: str, suffix: str, limit: int) -> str:
    """Return ``<base>_<suffix>`` cut to ``limit`` characters with a stable hash when long."""
    full = f"{base}_{suffix}"
    if len(full) <= limit:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:8]
    keep = limit - len(suffix) - len(digest) - 2
    return f"{base[:keep].rstrip('_')}_{digest}_{suffix}"


class _Builder:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.enums = enum_specs(schema)
        from .crud import listed_orders

        #: Entity -> the keyset order of its generated list, indexed in its Meta.
        self.list_orders = listed_orders(schema)
        # Name lookups by dict, not by the schema's linear ``entity()`` / ``enum()`` scans
        # (quadratic over hundreds of entities); the first declaration wins, as there.
        self.entity_nodes: dict[str, Entity] = {}
        for entity in schema.entities:
            self.entity_nodes.setdefault(entity.name, entity)
        self.enum_nodes: dict[str, Enum] = {}
        for enum in schema.enums:
            self.enum_nodes.setdefault(enum.name, enum)
        #: (owner entity, fk column) -> relation field name, for the links made so far.
        self.fk_fields: dict[tuple[str, str], str] = {}

    # -- scalars ------------------------------------------------------------------------

    def scalar_field(self, f: Field, composite: bool) -> FieldSpec:
        typ = f.type
        if typ.is_list:
            # A PostgreSQL array or a JSON array, picked per connection at run time.
            kwargs_list: list[tuple[str, Any]] = [("element", typ.name)]
            if typ.optional:
                kwargs_list += [("null", True), ("blank", True)]
            else:
                kwargs_list.append(("default", Sym("list", list)))
            return FieldSpec(f.name, "ListField", kwargs=kwargs_list, is_list=True)
        kwargs: list[tuple[str, Any]] = []
        named = None if typ.is_inline_enum else self.enum_nodes.get(typ.name)
        if typ.is_inline_enum or named is not None:
            # text, as the sql backend's column: adding a value never needs a wider column.
            cls = "TextField"
            values = typ.enum_values if named is None else named.values
            if typ.is_inline_enum:
                kwargs.append(("choices", [Sym(f"({_q(v)}, {_q(v)})", (v, v)) for v in values]))
            else:
                choices = [(v, v) for v in values]
                kwargs.append(("choices", Sym(f"{typ.name}.choices", choices)))
        elif typ.name == "string":
            cls = "CharField" if f.max_len is not None else "TextField"
            if f.max_len is not None:
                kwargs.append(("max_length", f.max_len))
        else:
            cls = _SCALAR_FIELDS[typ.name]
        if f.primary and not composite:
            kwargs.insert(0, ("primary_key", True))
            if typ.name == "uuid" and f.default is None:
                kwargs.append(("default", Sym("uuid.uuid4", uuid.uuid4, "import uuid")))
        if f.unique and not f.primary:
            kwargs.append(("unique", True))
        if typ.optional:
            kwargs += [("null", True), ("blank", True)]
        kwargs += self.default_kwargs(f)
        return FieldSpec(f.name, cls, kwargs=kwargs)

    def default_kwargs(self, f: Field) -> list[tuple[str, Any]]:
        d = f.default
        if d is None:
            return []
        if d.kind == "now":
            return [
                ("default", Sym("timezone.now", timezone.now, "from django.utils import timezone")),
                ("db_default", Sym("Now()", Now(), "from django.db.models.functions import Now")),
            ]
        if d.kind == "enum":
            enum = self.enums.get(f.type.name)
            value = str(d.value)
            if enum is not None and value in dict((v, m) for m, v in enum.members):
                return [("default", Sym(f"{enum.name}.{enum.member(value)}", value))]
            return [("default", value)]
        return [("default", _coerce(f.type, d.value))]

    # -- relations ----------------------------------------------------------------------

    def reverse_name(self, target: str, owner: str, fk: str | None, kinds: tuple[str, ...]) -> str:
        entity = self.entity_nodes.get(target)
        if entity is None:
            return "+"
        for rel in entity.relations:
            if rel.kind in kinds and rel.target == owner and rel.foreign_key == fk:
                return rel.name
        return "+"

    def fk_field(
        self, owner: Entity, rel: Relation, name: str, related_name: str, declared: Field | None
    ) -> FieldSpec:
        fk = rel.foreign_key or f"{name}_id"
        one = declared is not None and declared.unique
        nullable = rel.on_delete == "set_null" or (declared is not None and declared.optional)
        code, obj = _ON_DELETE.get(rel.on_delete, _ON_DELETE["restrict"])
        kwargs: list[tuple[str, Any]] = [("on_delete", Sym(code, obj))]
        if nullable:
            kwargs += [("null", True), ("blank", True)]
        kwargs += [("db_column", fk), ("related_name", related_name)]
        cls = "OneToOneField" if one else "ForeignKey"
        return FieldSpec(name, cls, args=[rel.target], kwargs=kwargs, target=rel.target)

    def links(self) -> dict[str, list[tuple[str, Relation, str, str]]]:
        """Return, per owning entity, its foreign keys: (fk column, relation, name, reverse)."""
        out: dict[str, list[tuple[str, Relation, str, str]]] = {}
        for entity in self.schema.entities:
            for rel in entity.relations:
                if rel.kind != "belongs_to":
                    continue
                fk = rel.foreign_key or f"{rel.name}_id"
                reverse = self.reverse_name(rel.target, entity.name, rel.foreign_key, _HAS)
                out.setdefault(entity.name, []).append((fk, rel, rel.name, reverse))
        # A has_many / has_one whose target declares no matching belongs_to still owns a
        # foreign key on the target (the column exists either way).
        for entity in self.schema.entities:
            for rel in entity.relations:
                if rel.kind not in _HAS or rel.foreign_key is None:
                    continue
                if any(fk == rel.foreign_key for fk, *_ in out.get(rel.target, [])):
                    continue
                fk = rel.foreign_key
                name = fk[:-3] if fk.endswith("_id") and len(fk) > 3 else f"{fk}_ref"
                owner_rel = Relation("belongs_to", name, entity.name, rel.pos, fk, "restrict")
                out.setdefault(rel.target, []).append((fk, owner_rel, name, rel.name))
        return out

    def many_to_many(self) -> dict[str, list[FieldSpec]]:
        out: dict[str, list[FieldSpec]] = {}
        claimed: set[tuple[str, str, str]] = set()
        for entity in self.schema.entities:
            for rel in entity.relations:
                if rel.kind != "many_to_many":
                    continue
                table = rel.join_table or f"{entity.table_name}_{rel.name}"
                if (rel.target, entity.name, table) in claimed:
                    continue  # the other side already owns this join table
                claimed.add((entity.name, rel.target, table))
                reverse = "+"
                target = self.entity_nodes.get(rel.target)
                for other in target.relations if target else ():
                    other_table = other.join_table or f"{target.table_name}_{other.name}"
                    if (
                        other.kind == "many_to_many"
                        and other.target == entity.name
                        and other_table == table
                        and other is not rel
                    ):
                        reverse = other.name
                kwargs: list[tuple[str, Any]] = [("db_table", table), ("related_name", reverse)]
                spec = FieldSpec(rel.name, "ManyToManyField", [rel.target], kwargs, rel.target)
                out.setdefault(entity.name, []).append(spec)
        return out

    # -- models -------------------------------------------------------------------------

    def model(
        self,
        entity: Entity,
        links: list[tuple[str, Relation, str, str]],
        m2m: list[FieldSpec],
    ) -> ModelSpec:
        spec = ModelSpec(entity)
        primaries = entity.primary_fields
        composite = len(primaries) > 1
        by_column = {fk: (rel, name, reverse) for fk, rel, name, reverse in links}
        column_to_field: dict[str, str] = {}
        if not primaries:
            spec.fields.append(FieldSpec("id", "BigAutoField", kwargs=[("primary_key", True)]))
        if composite:
            names = [p.name for p in primaries]
            spec.fields.append(FieldSpec("pk", "CompositePrimaryKey", args=names))
        for f in entity.fields:
            if f.name in by_column and not f.primary:
                rel, name, reverse = by_column.pop(f.name)
                spec.fields.append(self.fk_field(entity, rel, name, reverse, f))
                column_to_field[f.name] = name
            else:
                spec.fields.append(self.scalar_field(f, composite))
        for fk, (rel, name, reverse) in by_column.items():
            spec.fields.append(self.fk_field(entity, rel, name, reverse, None))
            column_to_field[fk] = name
        spec.fields.extend(m2m)
        for index in entity.indexes:
            fields = tuple(column_to_field.get(c, c) for c in index.columns)
            cols = "_".join(index.columns)
            if index.unique:
                name = short_name(f"{entity.table_name}_{cols}", "key", IDENTIFIER_MAX)
            else:
                name = short_name(f"{entity.table_name}_{cols}", "idx", INDEX_NAME_MAX)
            spec.indexes.append(IndexSpec(name, fields, index.unique))
        order = self.list_orders.get(entity.name)
        if order is not None:
            # The generated list's ORDER BY (and keyset range), unless a declared index
            # already starts with it.
            fields = tuple(column_to_field.get(c, c) for c in order)
            if not any(i.fields[: len(fields)] == fields for i in spec.indexes if not i.check_in):
                name = short_name(f"{entity.table_name}_{'_'.join(order)}", "idx", INDEX_NAME_MAX)
                spec.indexes.append(IndexSpec(name, fields, False))
        for f in entity.fields:
            values = f.type.enum_values if f.type.is_inline_enum else ()
            named = None if f.type.is_scalar else self.enum_nodes.get(f.type.name)
            values = values or (named.values if named is not None else ())
            if values and column_to_field.get(f.name, f.name) == f.name:
                name = short_name(f"{entity.table_name}_{f.name}", "check", IDENTIFIER_MAX)
                spec.indexes.append(IndexSpec(name, (f.name,), False, tuple(values)))
        return spec


_HAS = ("has_many", "has_one")


def _q(text: str) -> str:
    from ..pysource import py_str

    return py_str(text)


def _coerce(typ: TypeRef, value: Any) -> Any:
    """Return a literal default in the Python type of the field."""
    if typ.name == "bool" and isinstance(value, str):
        return value.lower() == "true"
    if typ.name in ("int32", "int64") and isinstance(value, (int, float, str)):
        try:
            return int(value)
        except ValueError:
            return value
    if typ.name in ("float32", "float64") and isinstance(value, (int, float, str)):
        try:
            return float(value)
        except ValueError:
            return value
    return value


@per_schema
def build_specs(schema: Schema) -> list[ModelSpec]:
    """Return one :class:`ModelSpec` per entity, in declaration order.

    Computed once per schema (``models`` and ``migrations`` both need it); callers only read.
    """
    builder = _Builder(schema)
    links = builder.links()
    m2m = builder.many_to_many()
    return [builder.model(e, links.get(e.name, []), m2m.get(e.name, [])) for e in schema.entities]

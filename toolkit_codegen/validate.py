"""Resolve names and check a parsed schema, collecting every diagnostic (phase ``resolve``).

The checks follow the original compiler's resolver (reference facts, section 1): names are
global across modules, unknown names get a "did you mean", rpcs are secure by default,
inputs are validated everywhere (validate-everything-in), and attributes are checked
against the type they decorate. Nothing here raises on a well-formed tree: every problem
becomes a :class:`~toolkit_codegen.nodes.Diagnostic`.
"""

from __future__ import annotations

import dataclasses
import keyword
import re
import uuid
from collections.abc import Iterable, Iterator
from datetime import date
from typing import Any

from .cron import cron_problem
from .grammar import did_you_mean, sort_diagnostics
from .nodes import (
    ERROR_STATUS,
    HTTP_METHODS,
    SCALAR_ALIASES,
    SCALARS,
    Default,
    Diagnostic,
    Entity,
    Enum,
    Field,
    Job,
    Message,
    Param,
    Position,
    Relation,
    Rpc,
    Saga,
    Schedule,
    Schema,
    Service,
    TypeRef,
    Validation,
)

__all__ = ["MAX_TYPE_DEPTH", "validate"]

#: How deep validate-everything-in follows nested messages before giving up.
MAX_TYPE_DEPTH = 200
STRING_SCALARS = frozenset({"string"})
NUMERIC_SCALARS = frozenset({"int32", "int64", "float32", "float64"})
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
PRIMARY_SCALARS = frozenset({"uuid", "string", "int32", "int64"})
#: The element types of a list type ``[T]`` (PostgreSQL array elements, JSON on SQLite).
LIST_ELEMENTS = (
    "string",
    "uuid",
    "bool",
    "int32",
    "int64",
    "float32",
    "float64",
    "date",
    "timestamp",
)
ON_DELETE = ("restrict", "cascade", "set_null")
_LENGTH_RULES = ("min_len", "max_len", "format")
_NUMBER_RULES = ("gt", "gte", "lt", "lte")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_Decl = Entity | Message | Enum | Service | Job | Schedule | Saga
#: Declaration kinds that name a type (the others: service, job, schedule, saga).
_TYPE_KINDS = frozenset({"entity", "message", "enum"})
#: Literal families a dispatch argument may take, by job parameter scalar.
_DISPATCH_SCALARS = frozenset(
    {"string", "bool", "int32", "int64", "float32", "float64", "uuid", "date"}
)


def validate(
    schema: Schema, broken: Iterable[str] = (), damaged: Iterable[Position] = ()
) -> list[Diagnostic]:
    """Return every resolve-phase diagnostic of ``schema``, sorted.

    ``broken`` names declarations that failed to parse: references to them are not
    reported as unknown, since the syntax error already explains them. ``damaged`` holds
    the positions of declarations and rpcs with an option that failed to build: that
    option is not reported again as missing.
    """
    checker = _Checker(schema, frozenset(broken))
    checker.damaged = frozenset(damaged)
    checker.run()
    return sort_diagnostics(checker.diagnostics)


def _named_nodes(value: object) -> Iterator[Any]:
    """Yield every declared node (entity, field, rpc, ...) of a tree; not type references."""
    if isinstance(value, tuple):
        for item in value:
            yield from _named_nodes(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type | TypeRef | Position):
        if isinstance(getattr(value, "name", None), str) and hasattr(value, "pos"):
            yield value
        for f in dataclasses.fields(value):
            yield from _named_nodes(getattr(value, f.name))


class _Checker:
    def __init__(self, schema: Schema, broken: frozenset[str] = frozenset()) -> None:
        self.schema = schema
        self.broken = broken
        self.diagnostics: list[Diagnostic] = []
        #: name -> kind of the first declaration of that name ("entity", "message", ...).
        self.kinds: dict[str, str] = {}
        self.entities: dict[str, Entity] = {}
        self.messages: dict[str, Message] = {}
        self.enum_values: dict[str, tuple[str, ...]] = {}
        self.reported_inputs: set[tuple[str, str]] = set()
        self.damaged: frozenset[Position] = frozenset()
        self.depth_reported = False

    def error(self, pos: Position, message: str) -> None:
        self.diagnostics.append(Diagnostic(pos, "resolve", message))

    def warn(self, pos: Position, message: str) -> None:
        self.diagnostics.append(Diagnostic(pos, "resolve", message, "warning"))

    # ------------------------------------------------------------------ declarations

    def run(self) -> None:
        self.check_python_keywords()
        self.declare()
        for module in self.schema.modules:
            for enum in module.enums:
                self.check_enum_values(enum.values, enum.pos, f"enum {enum.name}")
            for entity in module.entities:
                self.check_entity(entity)
            for message in module.messages:
                self.check_fields(message.name, message.fields, "message")
        routes: dict[tuple[str, str], tuple[str, Position]] = {}
        for module in self.schema.modules:
            for service in module.services:
                self.check_service(service, module.version, routes)
        for module in self.schema.modules:
            for job in module.jobs:
                self.check_job(job)
            for schedule in module.schedules:
                self.check_schedule(schedule)
            for saga in module.sagas:
                self.check_saga(saga)

    def check_python_keywords(self) -> None:
        """Refuse declaration names that are Python keywords (they become class names).

        ``None``, ``True`` and ``False`` look like ordinary names to the schema language
        but cannot name a generated class or function. Fields and parameters are left to
        the backends: the MCP server takes ``from`` as ``**arguments``, the Django
        backends refuse it with their own diagnostic.
        """
        for node in _named_nodes(self.schema.modules):
            if keyword.iskeyword(node.name) and not isinstance(node, Field | Param | Relation):
                kind = type(node).__name__.lower()
                self.error(
                    node.pos,
                    f'{kind} name "{node.name}" is a Python keyword; the generated code '
                    "cannot use it, so choose another name",
                )

    def declare(self) -> None:
        decls: list[tuple[int, Position, str, _Decl]] = []
        for index, module in enumerate(self.schema.modules):
            groups: tuple[tuple[str, tuple[_Decl, ...]], ...] = (
                ("entity", module.entities),
                ("message", module.messages),
                ("enum", module.enums),
                ("service", module.services),
                ("job", module.jobs),
                ("schedule", module.schedules),
                ("saga", module.sagas),
            )
            for kind, group in groups:
                decls.extend((index, decl.pos, kind, decl) for decl in group)
        decls.sort(key=lambda d: (d[0], d[1]))
        first: dict[str, Position] = {}
        for _, pos, kind, node in decls:
            name = node.name
            if name in first:
                self.error(pos, f"duplicate declaration {name} (first declared at {first[name]})")
                continue
            first[name] = pos
            self.kinds[name] = kind
            if isinstance(node, Entity):
                self.entities[name] = node
            elif isinstance(node, Message):
                self.messages[name] = node
            elif isinstance(node, Enum):
                self.enum_values[name] = node.values

    def type_names(self) -> list[str]:
        return [*SCALARS, *SCALAR_ALIASES, *(n for n, k in self.kinds.items() if k in _TYPE_KINDS)]

    def check_enum_values(self, values: tuple[str, ...], pos: Position, what: str) -> None:
        if not values:
            self.error(pos, f"{what} has no values")
        seen: set[str] = set()
        for value in values:
            if value in seen:
                self.error(pos, f"duplicate value {value} in {what}")
            seen.add(value)

    # ------------------------------------------------------------------ types

    def resolve_type(self, ref: TypeRef, owner: str) -> str | None:
        """Return the kind of a type ("scalar", "enum", "entity", "message") or None."""
        if ref.name == "enum":
            if not ref.enum_values:
                self.error(ref.pos, "an inline enum needs values: enum(a, b)")
                return None
            self.check_enum_values(ref.enum_values, ref.pos, f"the inline enum of {owner}")
            return "enum"
        if ref.is_list:
            if ref.name not in LIST_ELEMENTS:
                self.error(
                    ref.pos,
                    f"a list holds scalars ({', '.join(LIST_ELEMENTS)}); [{ref.name}] is not "
                    f"one{did_you_mean(ref.name, LIST_ELEMENTS)}",
                )
                return None
            return "scalar"
        if ref.is_scalar:
            return "scalar"
        kind = self.kinds.get(ref.name)
        if kind is None and ref.name in self.broken:
            return None
        if kind is None or kind not in _TYPE_KINDS:
            what = f"{_an(kind)}, not a type:" if kind is not None else "unknown type"
            self.error(ref.pos, f"{what} {ref.name}{did_you_mean(ref.name, self.type_names())}")
            return None
        return kind

    def enum_of(self, ref: TypeRef) -> tuple[str, ...] | None:
        if ref.is_inline_enum:
            return ref.enum_values
        return self.enum_values.get(ref.name)

    # ------------------------------------------------------------------ entities

    def check_entity(self, entity: Entity) -> None:
        self.check_fields(entity.name, entity.fields, "entity")
        members: dict[str, Position] = {f.name: f.pos for f in entity.fields}
        for rel in entity.relations:
            if rel.name in members:
                self.error(
                    rel.pos,
                    f"duplicate field {rel.name} in entity {entity.name} "
                    f"(first declared at {members[rel.name]})",
                )
            members.setdefault(rel.name, rel.pos)
            self.check_relation(entity, rel)
        for index in entity.indexes:
            seen: set[str] = set()
            for column in index.columns:
                if column in seen:
                    self.error(index.pos, f"index lists column {column} twice")
                seen.add(column)
                if entity.field(column) is None:
                    hint = did_you_mean(column, [f.name for f in entity.fields])
                    self.error(
                        index.pos,
                        f"index column {column} does not exist on entity {entity.name}{hint}",
                    )
        if entity.db_schema is not None and not _IDENT.match(entity.db_schema):
            self.error(entity.pos, f"@schema({entity.db_schema}) is not a valid schema name")

    def check_relation(self, entity: Entity, rel: Relation) -> None:
        target = self.entities.get(rel.target)
        if target is None:
            kind = self.kinds.get(rel.target)
            if kind is not None:
                self.error(
                    rel.pos, f"relation target {rel.target} must be an entity, not {_an(kind)}"
                )
            elif rel.target not in self.broken:
                hint = did_you_mean(rel.target, self.entities)
                self.error(rel.pos, f"unresolved relation target {rel.target}{hint}")
        if rel.kind == "many_to_many":
            return
        if rel.on_delete not in ON_DELETE:
            hint = did_you_mean(rel.on_delete, ON_DELETE)
            self.error(
                rel.pos,
                f"invalid @on_delete({rel.on_delete}){hint}; "
                "expected restrict, cascade or set_null",
            )
        if rel.foreign_key is None:
            self.error(rel.pos, f"{rel.kind} {rel.name} needs @foreign_key(<column>)")
            return
        if target is None:
            return
        # belongs_to: the column is ours and points at the target's key; has_*: the reverse.
        holder, referenced = (entity, target) if rel.kind == "belongs_to" else (target, entity)
        column = holder.field(rel.foreign_key)
        if column is None:
            hint = did_you_mean(rel.foreign_key, [f.name for f in holder.fields])
            self.error(
                rel.pos,
                f"foreign key column {rel.foreign_key} does not exist on entity "
                f"{holder.name}{hint}",
            )
            return
        keys = referenced.primary_fields
        if len(keys) == 1 and column.type.name != keys[0].type.name:
            self.error(
                rel.pos,
                f"foreign key {holder.name}.{column.name} is {column.type.name} but "
                f"{referenced.name}.{keys[0].name} is {keys[0].type.name}",
            )
        if rel.on_delete == "set_null" and not column.optional:
            self.error(
                rel.pos,
                f"@on_delete(set_null) needs an optional foreign key column: write "
                f"{column.name}: {column.type.name}?",
            )
        if rel.kind == "has_one" and not column.unique and not column.primary:
            self.warn(
                rel.pos,
                f"has_one {rel.name}: {holder.name}.{column.name} should be @unique "
                "(one row per owner)",
            )
        if rel.kind != "belongs_to":
            backs = [
                r for r in target.relations if r.kind == "belongs_to" and r.target == entity.name
            ]
            if backs and all(r.foreign_key != rel.foreign_key for r in backs):
                self.error(
                    rel.pos,
                    f"{rel.kind} {rel.name} uses @foreign_key({rel.foreign_key}) but "
                    f"{target.name} belongs_to {entity.name} through "
                    f"@foreign_key({backs[0].foreign_key})",
                )

    # ------------------------------------------------------------------ fields

    def check_fields(self, owner: str, fields: Iterable[Field], context: str) -> None:
        fields = tuple(fields)
        seen: dict[str, Position] = {}
        names = {f.name for f in fields}
        for f in fields:
            if f.name in seen:
                self.error(
                    f.pos,
                    f"duplicate field {f.name} in {context} {owner} "
                    f"(first declared at {seen[f.name]})",
                )
            else:
                seen[f.name] = f.pos
            kind = self.resolve_type(f.type, f"{owner}.{f.name}")
            if context == "entity" and kind in ("entity", "message"):
                hint = (
                    f"use belongs_to/has_one to reference entity {f.type.name}"
                    if kind == "entity"
                    else "store it as json, or flatten its fields"
                )
                self.error(
                    f.type.pos,
                    f"entity field {owner}.{f.name} cannot hold {_an(kind)} "
                    f"({f.type.name}); {hint}",
                )
            if f.type.is_list and (f.primary or f.unique or f.default is not None):
                what = "@primary" if f.primary else "@unique" if f.unique else "@default"
                self.error(
                    f.pos,
                    f"list field {owner}.{f.name} cannot be {what} (a list is stored as one "
                    "array or JSON value; an absent list is [] or null with ?)",
                )
                continue
            if f.primary:
                if f.optional:
                    self.error(f.pos, f"@primary field {owner}.{f.name} cannot be optional")
                if kind == "scalar" and f.type.name not in PRIMARY_SCALARS:
                    self.error(
                        f.pos,
                        f"@primary field {owner}.{f.name} is {f.type.name}; a key is uuid, "
                        "string, int32 or int64",
                    )
            if f.default is not None and kind is not None:
                self.check_default(f, f.default, kind, owner)
            if f.validation is not None and kind is not None:
                self.check_validation(f.type, f.validation, kind, f"{owner}.{f.name}")
            if f.renamed_from is not None:
                if f.renamed_from == f.name:
                    self.error(f.pos, f"@renamed_from names the field's own name {f.name}")
                elif f.renamed_from in names:
                    self.error(
                        f.pos,
                        f'@renamed_from("{f.renamed_from}"): a field called '
                        f"{f.renamed_from} is still declared in {owner}",
                    )

    def check_default(self, f: Field, default: Default, kind: str, owner: str) -> None:
        where = f"{owner}.{f.name}"
        type_name = f.type.name
        if default.kind == "now":
            if type_name != "timestamp":
                self.error(
                    default.pos, f"now() is only valid on timestamp fields; {where} is {type_name}"
                )
            return
        if kind == "enum":
            values = self.enum_of(f.type) or ()
            if default.kind != "enum":
                self.error(
                    default.pos,
                    f"the default of enum field {where} names a value without quotes, "
                    f"e.g. @default({values[0] if values else 'value'})",
                )
            elif default.value not in values:
                hint = did_you_mean(str(default.value), values)
                self.error(
                    default.pos, f"{default.value} is not a value of the enum of {where}{hint}"
                )
            return
        if kind in ("entity", "message"):
            self.error(default.pos, f"@default is not supported on {where} ({type_name})")
            return
        if default.kind == "enum":
            hint = (
                f'; for a string write @default("{default.value}")' if type_name == "string" else ""
            )
            self.error(
                default.pos,
                f"@default({default.value}) names an enum value but {where} is {type_name}{hint}",
            )
            return
        value = default.value
        problem = _literal_problem(type_name, value)
        if problem:
            self.error(default.pos, f"@default({_show(value)}) does not fit {where}: {problem}")

    def check_validation(self, ref: TypeRef, v: Validation, kind: str, where: str) -> None:
        if kind in ("entity", "message"):
            self.error(
                v.pos,
                f"@validate on {where} ({ref.name}) is not allowed; put @validate on the "
                f"fields of {ref.name} instead",
            )
            return
        given = [r for r in (*_LENGTH_RULES, *_NUMBER_RULES) if getattr(v, r) is not None]
        if kind == "enum":
            self.error(v.pos, f"@validate does not apply to enum {where}")
            return
        allowed: tuple[str, ...]
        if ref.name in STRING_SCALARS:
            allowed = _LENGTH_RULES
        elif ref.name in NUMERIC_SCALARS:
            allowed = _NUMBER_RULES
        else:
            self.error(v.pos, f"@validate has no rule for {ref.name} ({where})")
            return
        for rule in given:
            if rule not in allowed:
                family = "strings" if rule in _LENGTH_RULES else "numbers"
                self.error(v.pos, f"{rule} applies to {family}, not {ref.name} ({where})")
        if v.min_len is not None and v.max_len is not None and v.min_len > v.max_len:
            self.error(v.pos, f"min_len {v.min_len} is greater than max_len {v.max_len} ({where})")
        lower = [(b, strict) for b, strict in ((v.gt, True), (v.gte, False)) if b is not None]
        upper = [(b, strict) for b, strict in ((v.lt, True), (v.lte, False)) if b is not None]
        for lo, lo_strict in lower:
            for hi, hi_strict in upper:
                if lo > hi or (lo == hi and (lo_strict or hi_strict)):
                    self.error(v.pos, f"@validate bounds leave no valid value ({where})")

    # ------------------------------------------------------------------ services

    def check_service(
        self,
        service: Service,
        version: str,
        routes: dict[tuple[str, str], tuple[str, Position]],
    ) -> None:
        seen: dict[str, Position] = {}
        for rpc in service.rpcs:
            label = f"{service.name}.{rpc.name}"
            if rpc.name in seen:
                self.error(
                    rpc.pos,
                    f"duplicate rpc {rpc.name} in service {service.name} "
                    f"(first declared at {seen[rpc.name]})",
                )
            seen.setdefault(rpc.name, rpc.pos)
            kinds = self.check_params(rpc, label)
            self.check_returns(rpc, label)
            self.check_http(rpc, label, kinds, version, routes)
            self.check_options(rpc, label)
            for param in rpc.params:
                if kinds.get(param.name) in ("entity", "message"):
                    self.check_inputs(param.type.name, label, set(), 0)

    def check_params(self, rpc: Rpc | Job, label: str, what: str = "rpc") -> dict[str, str | None]:
        kinds: dict[str, str | None] = {}
        for p in rpc.params:
            if p.name in kinds:
                self.error(p.pos, f"duplicate parameter {p.name} in {what} {label}")
                continue
            kind = self.resolve_type(p.type, f"{label}({p.name})")
            kinds[p.name] = kind
            if p.validation is not None and kind is not None:
                self.check_validation(p.type, p.validation, kind, f"parameter {p.name} of {label}")
        return kinds

    def check_returns(self, rpc: Rpc, label: str) -> None:
        name = rpc.returns.name
        kind = self.kinds.get(name)
        if kind in ("entity", "message"):
            return
        if kind is None and name in self.broken:
            return
        if kind is None and name not in SCALARS and name not in SCALAR_ALIASES:
            returnable = [n for n, k in self.kinds.items() if k in ("entity", "message")]
            self.error(rpc.returns.pos, f"unknown type {name}{did_you_mean(name, returnable)}")
            return
        what = kind or "scalar"
        self.error(
            rpc.returns.pos,
            f"rpc {label} returns {name} ({_an(what)}); an rpc returns an entity or a message",
        )

    def check_http(
        self,
        rpc: Rpc,
        label: str,
        kinds: dict[str, str | None],
        version: str,
        routes: dict[tuple[str, str], tuple[str, Position]],
    ) -> None:
        http = rpc.http
        if http is None:
            self.warn(rpc.pos, f"rpc {label} has no http: binding, so it gets no HTTP route")
            return
        if http.method not in HTTP_METHODS:
            hint = did_you_mean(http.method, HTTP_METHODS)
            self.error(
                http.pos,
                f"invalid HTTP method {http.method}{hint}; expected {', '.join(HTTP_METHODS)}",
            )
        path = http.path
        if not path.startswith("/"):
            self.error(http.pos, f'path "{path}" must start with "/"')
        if any(c in path for c in "?# \t\n"):
            self.error(http.pos, f'path "{path}" must not contain spaces, "?" or "#"')
        if not _balanced(path):
            self.error(http.pos, f'unbalanced braces in path "{path}"')
        else:
            names: set[str] = set()
            for name in http.path_params:
                if not name:
                    self.error(http.pos, f'empty path parameter {{}} in "{path}"')
                    continue
                if name in names:
                    self.error(http.pos, f"path parameter {{{name}}} appears twice")
                names.add(name)
                param = next((p for p in rpc.params if p.name == name), None)
                if param is None:
                    hint = did_you_mean(name, [p.name for p in rpc.params])
                    self.error(
                        http.pos,
                        f"path parameter {{{name}}} does not match a parameter of {label}{hint}",
                    )
                    continue
                if kinds.get(name) in ("entity", "message"):
                    self.error(param.pos, f"path parameter {name} must be a scalar or an enum")
                if param.type.optional:
                    self.error(param.pos, f"path parameter {name} cannot be optional")
            if http.method in ("GET", "DELETE"):
                for p in rpc.params:
                    if p.type.is_list:
                        self.error(
                            p.pos,
                            f"{http.method} rpc {label} has no request body: list parameter "
                            f"{p.name} travels in a JSON body; use POST, PUT or PATCH",
                        )
                    elif kinds.get(p.name) in ("entity", "message"):
                        self.error(
                            p.pos,
                            f"{http.method} rpc {label} has no request body: parameter "
                            f"{p.name} ({p.type.name}) must be a scalar; use POST, PUT or PATCH",
                        )
            shape = re.sub(r"\{[^{}]*\}", "{}", path)
            key = (http.method, shape)
            if key in routes:
                other, where = routes[key]
                self.error(
                    http.pos, f"route {http.method} {path} is already bound to {other} at {where}"
                )
            else:
                routes[key] = (label, http.pos)
        if version and not path.startswith(f"/{version}/"):
            self.warn(
                http.pos,
                f'path "{path}" of versioned module {version} should start with /{version}/',
            )

    def check_options(self, rpc: Rpc, label: str) -> None:
        if rpc.permission is not None:
            self.check_permission(rpc, label)
        if rpc.auth is None:
            if rpc.permission is None and rpc.pos not in self.damaged:
                self.error(
                    rpc.pos,
                    f"rpc {label} requires auth (secure-by-default); write `auth: none` for a "
                    "public route, `auth: required`, or a `permission:`",
                )
        else:
            seen_roles: set[str] = set()
            for role in rpc.auth.roles:
                if role in seen_roles:
                    self.error(rpc.auth.pos, f"role {role} is listed twice")
                seen_roles.add(role)
        codes: set[str] = set()
        for err in rpc.errors:
            if err.code not in ERROR_STATUS:
                self.error(
                    err.pos, f"unknown error code {err.code}{did_you_mean(err.code, ERROR_STATUS)}"
                )
            elif err.code in codes:
                self.error(err.pos, f"duplicate error code {err.code}")
            codes.add(err.code)
        if rpc.paginated:
            for p in rpc.params:
                if p.name in ("cursor", "limit"):
                    self.error(
                        p.pos,
                        f"paginated rpc {label} reserves the query parameters cursor and limit",
                    )
            if rpc.http is not None and rpc.http.method != "GET":
                self.warn(rpc.http.pos, f"paginated rpc {label} is usually a GET")

    def check_permission(self, rpc: Rpc, label: str) -> None:
        """``resource:`` must be an entity and ``owner_field:`` one of its fields."""
        perm = rpc.permission
        if perm is None or not perm.check or perm.resource is None:
            return
        where = perm.resource_pos or perm.pos
        entity = self.entities.get(perm.resource)
        if entity is None:
            kind = self.kinds.get(perm.resource)
            if kind is not None:
                self.error(
                    where,
                    f"permission resource {perm.resource} of rpc {label} must be an entity, "
                    f"not {_an(kind)}",
                )
            elif perm.resource not in self.broken:
                hint = did_you_mean(perm.resource, self.entities)
                self.error(where, f"unknown permission resource {perm.resource}{hint}")
            return
        if perm.owner_field is not None and entity.field(perm.owner_field) is None:
            hint = did_you_mean(perm.owner_field, [f.name for f in entity.fields])
            self.error(
                perm.owner_field_pos or perm.pos,
                f"owner_field {perm.owner_field} is not a field of entity {entity.name}{hint}",
            )

    # ------------------------------------------------------------------ jobs, schedules, sagas

    def check_job(self, job: Job) -> None:
        kinds = self.check_params(job, job.name, "job")
        for param in job.params:
            if kinds.get(param.name) in ("entity", "message"):
                self.check_inputs(param.type.name, f"job {job.name}", set(), 0)

    def check_schedule(self, schedule: Schedule) -> None:
        label = f"schedule {schedule.name}"
        if schedule.pos in self.damaged:
            return  # an option failed to build; its own error says why
        if schedule.cron is None:
            self.error(schedule.pos, f'{label} needs cron: "<spec>", e.g. cron: "0 8 * * *"')
        else:
            problem = cron_problem(schedule.cron)
            if problem:
                self.error(schedule.cron_pos or schedule.pos, f"invalid cron in {label}: {problem}")
        call = schedule.dispatch
        if call is None:
            self.error(schedule.pos, f"{label} needs dispatch: <Job>(args)")
            return
        job = self.schema.job(call.job)
        if job is None or self.kinds.get(call.job) != "job":
            kind = self.kinds.get(call.job)
            if kind is not None and kind != "job":
                self.error(
                    call.pos, f"{label} dispatches {call.job}, which is {_an(kind)}, not a job"
                )
            elif call.job not in self.broken:
                jobs = [n for n, k in self.kinds.items() if k == "job"]
                self.error(
                    call.pos,
                    f"{label} dispatches unknown job {call.job}{did_you_mean(call.job, jobs)}",
                )
            return
        if len(call.args) != len(job.params):
            self.error(
                call.pos,
                f"{label}: job {job.name} takes {len(job.params)} argument"
                f"{'' if len(job.params) == 1 else 's'}, dispatch passes {len(call.args)}",
            )
            return
        bare = call.arg_bare or (False,) * len(call.args)
        for param, value, pos, is_bare in zip(
            job.params, call.args, call.arg_positions, bare, strict=False
        ):
            self.check_dispatch_arg(param, value, pos, label, is_bare)

    def check_dispatch_arg(
        self, param: Param, value: object, pos: Position, label: str, bare: bool = False
    ) -> None:
        ref = param.type
        values = self.enum_of(ref)
        if bare and values is None:
            self.error(
                pos,
                f"{label}: argument {value} is a bare name but {param.name} is {ref.name}; "
                f'quote a string ("{value}"), bare names are enum values',
            )
            return
        if values is not None:
            if not isinstance(value, str) or value not in values:
                hint = did_you_mean(str(value), values) if isinstance(value, str) else ""
                enum = "the inline enum" if ref.is_inline_enum else f"enum {ref.name}"
                shown = str(value) if bare else _show(value)
                self.error(
                    pos, f"{label}: {shown} is not a value of {enum} (parameter {param.name}){hint}"
                )
            return
        if ref.name == "timestamp":
            ok = isinstance(value, str)
            if not ok:
                self.error(pos, f"{label}: argument {param.name} (timestamp) takes an ISO string")
            return
        if ref.name not in _DISPATCH_SCALARS:
            if ref.name in ("json",):
                return
            self.error(
                pos,
                f"{label}: argument {param.name} is {ref.name}; a schedule passes literals, so "
                "the job's parameter must be a scalar or an enum",
            )
            return
        problem = _literal_problem(ref.name, value)
        if problem:
            self.error(
                pos, f"{label}: argument {_show(value)} does not fit {param.name}: {problem}"
            )

    def check_saga(self, saga: Saga) -> None:
        label = f"saga {saga.name}"
        if not saga.steps:
            self.error(saga.pos, f"{label} has no steps")
        seen: dict[str, Position] = {}
        pivots: list[str] = []
        for step in saga.steps:
            if step.name in seen:
                self.error(
                    step.pos,
                    f"duplicate step {step.name} in {label} (first declared at {seen[step.name]})",
                )
            seen.setdefault(step.name, step.pos)
            if step.execute is None and step.pos not in self.damaged:
                self.error(step.pos, f"step {step.name} of {label} needs execute: Service.Rpc")
            if step.pivot:
                if pivots:
                    self.error(
                        step.pos,
                        f"{label} has more than one pivot step ({pivots[0]} and {step.name}); "
                        "at most one step is the point of no return",
                    )
                pivots.append(step.name)
            for ref in (step.execute, step.compensate):
                if ref is None:
                    continue
                service = next((s for s in self.schema.services if s.name == ref.service), None)
                if service is None:
                    kind = self.kinds.get(ref.service)
                    if kind is not None:
                        self.error(
                            ref.pos, f"{ref.service} is {_an(kind)}, not a service ({label})"
                        )
                    elif ref.service not in self.broken:
                        names = [n for n, k in self.kinds.items() if k == "service"]
                        hint = did_you_mean(ref.service, names)
                        self.error(ref.pos, f"unknown service {ref.service}{hint} ({label})")
                    continue
                if not any(r.name == ref.rpc for r in service.rpcs):
                    hint = did_you_mean(ref.rpc, [r.name for r in service.rpcs])
                    self.error(
                        ref.pos, f"service {service.name} has no rpc {ref.rpc}{hint} ({label})"
                    )

    def check_inputs(self, type_name: str, label: str, seen: set[str], depth: int) -> None:
        """Require @validate on every validatable field reachable from an rpc input."""
        if type_name in seen:
            return
        if depth > MAX_TYPE_DEPTH:
            if not self.depth_reported:
                self.depth_reported = True
                decl = self.entities.get(type_name) or self.messages.get(type_name)
                if decl is not None:
                    self.error(decl.pos, f"types nest deeper than {MAX_TYPE_DEPTH} levels")
            return
        seen.add(type_name)
        decl = self.entities.get(type_name) or self.messages.get(type_name)
        if decl is None:
            return
        for f in decl.fields:
            name = f.type.name
            if name in STRING_SCALARS or name in NUMERIC_SCALARS:
                key = (decl.name, f.name)
                if f.validation is None and key not in self.reported_inputs:
                    self.reported_inputs.add(key)
                    self.error(
                        f.pos,
                        f"field {decl.name}.{f.name} ({name}) needs @validate: {decl.name} is an "
                        f"input of {label} (validate-everything-in)",
                    )
            elif name in self.entities or name in self.messages:
                self.check_inputs(name, label, seen, depth + 1)


def _an(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _balanced(path: str) -> bool:
    depth = 0
    for c in path:
        if c == "{":
            depth += 1
            if depth > 1:
                return False
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _literal_problem(type_name: str, value: object) -> str | None:
    """Return why a literal default does not fit a scalar, or None when it fits."""
    if type_name == "string":
        return None if isinstance(value, str) else "expected a string"
    if type_name == "bool":
        return None if isinstance(value, bool) else "expected true or false"
    if type_name in INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            return "expected an integer"
        lo, hi = INT_RANGES[type_name]
        return None if lo <= value <= hi else f"out of range for {type_name}"
    if type_name in ("float32", "float64"):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else "expected a number"
    if type_name == "uuid":
        if isinstance(value, str):
            try:
                uuid.UUID(value)
                return None
            except ValueError:
                pass
        return 'expected a UUID string, e.g. "00000000-0000-0000-0000-000000000000"'
    if type_name == "date":
        if isinstance(value, str):
            try:
                date.fromisoformat(value)
                return None
            except ValueError:
                pass
        return 'expected an ISO date string, e.g. "2024-01-31"'
    if type_name == "timestamp":
        return "a timestamp default must be now()"
    return f"{type_name} fields take no literal default"

"""The checks of entities, relations, fields, defaults and ``@validate`` (phase ``resolve``).

Everything here is about data shapes: what an entity may hold, how a relation names its
target, which literal a ``@default`` may take and which rules ``@validate`` allows for a
type. Services, jobs and sagas build on these checks in their own modules.
"""

from __future__ import annotations

from collections.abc import Iterable

from .grammar import did_you_mean
from .nodes import (
    Default,
    Entity,
    Field,
    Position,
    Relation,
    TypeRef,
    Validation,
)
from .validate_base import (
    _IDENT,
    _LENGTH_RULES,
    _NUMBER_RULES,
    NUMERIC_SCALARS,
    ON_DELETE,
    PRIMARY_SCALARS,
    STRING_SCALARS,
    CheckerBase,
    _an,
    _literal_problem,
    _show,
    finite_within,
)


class TypeChecks(CheckerBase):
    """Entity, relation, field, default and ``@validate`` rules."""

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
        for rule in (*_LENGTH_RULES, *_NUMBER_RULES):
            bound = getattr(v, rule)
            if isinstance(bound, int | float) and not finite_within(bound):
                self.error(v.pos, f"{rule} is too large a number to write ({where})")
                return
        if v.min_len is not None and v.max_len is not None and v.min_len > v.max_len:
            self.error(v.pos, f"min_len {v.min_len} is greater than max_len {v.max_len} ({where})")
        lower = [(b, strict) for b, strict in ((v.gt, True), (v.gte, False)) if b is not None]
        upper = [(b, strict) for b, strict in ((v.lt, True), (v.lte, False)) if b is not None]
        for lo, lo_strict in lower:
            for hi, hi_strict in upper:
                if lo > hi or (lo == hi and (lo_strict or hi_strict)):
                    self.error(v.pos, f"@validate bounds leave no valid value ({where})")

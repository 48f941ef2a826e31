"""The third pass: turn the grammar's raw records into frozen nodes.

The builder gives every node its 1-based position and checks the shape of attributes
(where each may appear, their arguments), which the nodes cannot represent when wrong.
:class:`ParsedFile` is what one file's parse produces: the nodes, the comments and the
diagnostics.

The declarations are built by layers: :mod:`.building_base` (positions, types,
parameters, attributes), :mod:`.building_background` (jobs, schedules, sagas) and this
module (entities, messages, enums, services and their rpcs).
"""

from __future__ import annotations

from typing import Any

from .building_background import BackgroundBuilding
from .building_base import ParsedFile, article, duration_seconds
from .nodes import (
    Auth,
    Diagnostic,
    Entity,
    Enum,
    ErrorCode,
    Field,
    HttpBinding,
    Index,
    Message,
    Permission,
    Position,
    Relation,
    Rpc,
    Service,
    TypeRef,
)
from .scanning import (
    RPC_OPTIONS,
    did_you_mean,
)
from .syntax import Raw

__all__ = ["Builder", "ParsedFile", "article", "duration_seconds"]


class Builder(BackgroundBuilding):
    """Turn :class:`Raw` parse results of one file into nodes, checking attribute shapes."""

    # -- declarations

    def declaration(self, raw: Raw) -> None:
        getattr(self, "_" + raw.kind)(raw)

    def _entity(self, raw: Raw) -> None:
        pos = self.pos(raw)
        attrs = self.attributes([r for r in raw.items[2:] if r.kind == "attr"], "entity")
        db_schema = self.single_name(attrs["schema"]) if "schema" in attrs else None
        fields, relations, indexes = self.members(raw.items[2:], "entity")
        self.end(pos, raw.items[-1])
        self.entities.append(
            Entity(
                raw.items[1],
                pos,
                tuple(fields),
                tuple(relations),
                tuple(indexes),
                db_schema=db_schema,
                doc=self.doc(raw),
            )
        )

    def _message(self, raw: Raw) -> None:
        pos = self.pos(raw)
        fields, relations, indexes = self.members(raw.items[2:], "message")
        extras: list[Relation | Index] = [*relations, *indexes]
        for r in extras:
            what = "relations" if isinstance(r, Relation) else "indexes"
            self.out.diagnostics.append(
                Diagnostic(r.pos, "parse", f"a message cannot have {what}; use an entity")
            )
        self.end(pos, raw.items[-1])
        self.messages.append(Message(raw.items[1], pos, tuple(fields), doc=self.doc(raw)))

    def _enum(self, raw: Raw) -> None:
        pos = self.pos(raw)
        value_raws = [r for r in raw.items[2:] if r.kind == "ident"]
        values = tuple(r.items[0] for r in value_raws)
        self.out.value_pos[pos] = tuple(self.pos(r) for r in value_raws)
        self.end(pos, raw.items[-1])
        self.enums.append(Enum(raw.items[1], values, pos, doc=self.doc(raw)))

    def _service(self, raw: Raw) -> None:
        pos = self.pos(raw)
        rpcs = tuple(self.rpc(r) for r in raw.items[2:] if r.kind == "rpc")
        self.end(pos, raw.items[-1])
        self.services.append(Service(raw.items[1], pos, rpcs, doc=self.doc(raw)))

    # -- members

    def members(
        self, raws: list[Any], place: str
    ) -> tuple[list[Field], list[Relation], list[Index]]:
        fields: list[Field] = []
        relations: list[Relation] = []
        indexes: list[Index] = []
        for r in raws:
            if not isinstance(r, Raw):
                continue
            if r.kind == "field":
                fields.append(self.field(r, place))
            elif r.kind == "relation":
                relations.append(self.relation(r))
            elif r.kind == "index":
                indexes.append(self.index(r))
        return fields, relations, indexes

    def field(self, raw: Raw, place: str) -> Field:
        pos = self.pos(raw)
        name, type_raw, *attr_raws = raw.items
        attrs = self.attributes(attr_raws, f"{place} field")
        return Field(
            name,
            self.type_ref(type_raw),
            pos,
            primary="primary" in attrs and self.flag(attrs["primary"]),
            unique="unique" in attrs and self.flag(attrs["unique"]),
            default=self.default(attrs["default"]) if "default" in attrs else None,
            validation=self.validation(attrs["validate"]) if "validate" in attrs else None,
            renamed_from=self.string(attrs["renamed_from"]) if "renamed_from" in attrs else None,
            doc=self.doc(raw),
        )

    def relation(self, raw: Raw) -> Relation:
        kind, name, target, join, *attr_raws = raw.items
        attrs = self.attributes(attr_raws, "relation")
        pos = self.pos(raw)
        foreign_key = self.single_name(attrs["foreign_key"]) if "foreign_key" in attrs else None
        on_delete = self.single_name(attrs["on_delete"]) if "on_delete" in attrs else None
        if kind == "many_to_many":
            for key in ("foreign_key", "on_delete"):
                if key in attrs:
                    self.error(attrs[key], f"@{key} is not allowed on many_to_many")
        elif join is not None:
            self.error(join, f"{{ join_table: ... }} is only allowed on many_to_many, not {kind}")
        return Relation(
            kind,
            name,
            target,
            pos,
            foreign_key=foreign_key if kind != "many_to_many" else None,
            on_delete=on_delete or "restrict",
            join_table=join.items[1] if join is not None and kind == "many_to_many" else None,
        )

    def index(self, raw: Raw) -> Index:
        _, columns, *attr_raws = raw.items
        attrs = self.attributes(attr_raws, "index")
        unique = "unique" in attrs and self.flag(attrs["unique"])
        return Index(tuple(columns), self.pos(raw), unique=unique)

    # -- rpcs

    def rpc(self, raw: Raw) -> Rpc:
        pos = self.pos(raw)
        _, name, param_raws, returns, options = raw.items
        params = tuple(self.param(p) for p in param_raws)
        http: HttpBinding | None = None
        auth: Auth | None = None
        permission: Permission | None = None
        paginated = False
        errors: tuple[ErrorCode, ...] = ()
        labels: dict[str, Position] = {}
        if options is not None:
            self.end(pos, options.items[-1])
            for opt in options.items[:-1]:
                label = opt.items[0]
                opt_pos = self.pos(opt)
                if opt.kind == "unknown_option":
                    hint = did_you_mean(label, RPC_OPTIONS)
                    self.error(
                        opt,
                        f'unknown rpc option "{label}"{hint}; expected one of '
                        + ", ".join(RPC_OPTIONS),
                    )
                    continue
                labels[opt.kind] = opt_pos
                if opt.kind == "http":
                    http = HttpBinding(opt.items[1], opt.items[2].items[0], opt_pos)
                elif opt.kind == "auth":
                    auth = self.auth(opt, opt_pos)
                elif opt.kind == "permission":
                    permission = self.permission(opt.items[1], opt_pos)
                    if permission is None:
                        self.out.damaged.add(pos)
                elif opt.kind == "paginated":
                    paginated = opt.items[1].items[0]
                elif opt.kind == "errors":
                    errors = tuple(
                        ErrorCode(
                            e.items[0],
                            self.pos(e),
                            e.items[1].items[0] if e.items[1] is not None else None,
                        )
                        for e in opt.items[1:]
                    )
        if labels:
            self.out.option_pos[pos] = labels
        return Rpc(
            name,
            params,
            TypeRef(returns.items[0], self.pos(returns)),
            pos,
            http=http,
            auth=auth,
            permission=permission,
            paginated=paginated,
            errors=errors,
            doc=self.doc(raw),
        )

    def auth(self, opt: Raw, pos: Position) -> Auth:
        value, roles = opt.items[1], opt.items[2]
        role_names = tuple(roles[1]) if roles is not None else ()
        if value == "none":
            if roles is not None:
                self.error(opt, "auth: none cannot list roles; write auth: required(roles: {...})")
            return Auth(pos, required=False)
        if value != "required":
            hint = did_you_mean(value, ("none", "required"))
            self.error(
                opt,
                f'unknown auth value "{value}"{hint}; expected none, required or '
                "required(roles: {...})",
            )
        elif roles is not None and not role_names:
            self.error(opt, "auth: required(roles: {}) needs at least one role")
        return Auth(pos, required=True, roles=role_names)

    def permission(self, value: Raw, pos: Position) -> Permission | None:
        """Build ``check("action", resource: E, owner_field: f)`` or ``none``."""
        if value.kind == "ident" and value.items[0] == "none":
            return Permission(pos, check=False)
        if value.kind != "call" or value.items[0] != "check":
            shown = value.items[0] if value.kind in ("ident", "call") else "this value"
            hint = did_you_mean(str(shown), ("check", "none"))
            self.error(
                value,
                f"invalid permission {shown}{hint}; expected "
                'check("action", resource: Entity, owner_field: field) or none',
            )
            return None
        action: str | None = None
        named: dict[str, Raw] = {}
        for arg in value.items[1]:
            key, item = arg.items
            if key is None:
                if action is not None or named or item.kind != "str":
                    self.error(
                        item, 'check(...) takes the action first, as a string: check("note.edit")'
                    )
                    continue
                action = item.items[0]
                continue
            if key not in ("resource", "owner_field"):
                hint = did_you_mean(key, ("resource", "owner_field"))
                self.error(
                    arg, f"unknown check argument {key}{hint}; expected resource, owner_field"
                )
                continue
            if key in named:
                self.error(arg, f"duplicate check argument {key}")
                continue
            if item.kind not in ("ident", "str"):
                self.error(item, f"check argument {key} takes a name")
                continue
            named[key] = item
        if action is None:
            self.error(value, 'check(...) needs an action string first: check("note.edit")')
            return None
        if not action.strip():
            self.error(value, "the permission action is empty")
        resource = named.get("resource")
        owner = named.get("owner_field")
        if owner is not None and resource is None:
            self.error(owner, "owner_field needs resource: name the entity that holds the field")
        return Permission(
            pos,
            check=True,
            action=action,
            resource=resource.items[0] if resource is not None else None,
            owner_field=owner.items[0] if owner is not None else None,
            resource_pos=self.pos(resource) if resource is not None else None,
            owner_field_pos=self.pos(owner) if owner is not None else None,
        )

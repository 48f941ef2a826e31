"""The third pass: turn the grammar's raw records into frozen nodes.

The builder gives every node its 1-based position and checks the shape of attributes
(where each may appear, their arguments), which the nodes cannot represent when wrong.
:class:`ParsedFile` is what one file's parse produces: the nodes, the comments and the
diagnostics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .nodes import (
    SCALAR_ALIASES,
    Auth,
    Default,
    Diagnostic,
    Entity,
    Enum,
    ErrorCode,
    Field,
    HttpBinding,
    Index,
    Job,
    JobCall,
    Message,
    Param,
    Permission,
    Position,
    Relation,
    Retry,
    Rpc,
    RpcRef,
    Saga,
    SagaStep,
    Schedule,
    Service,
    SourceFile,
    TypeRef,
    Validation,
)
from .scanning import (
    ATTRIBUTE_PLACES,
    BACKGROUND_OPTIONS,
    RPC_OPTIONS,
    VALIDATE_RULES,
    Comment,
    Locator,
    did_you_mean,
)
from .syntax import Raw

__all__ = ["Builder", "ParsedFile", "article", "duration_seconds"]

# --------------------------------------------------------------------------- building


@dataclass
class ParsedFile:
    """One parsed file: its declarations, diagnostics and the side channels of the text."""

    path: str
    text: str
    source: SourceFile
    diagnostics: list[Diagnostic]
    comments: list[Comment]
    #: Position of a block's owner (entity, message, enum, service, rpc) -> its closing ``}``.
    ends: dict[Position, Position] = field(default_factory=dict)
    #: Position of an rpc -> {option label: position of the label}.
    option_pos: dict[Position, dict[str, Position]] = field(default_factory=dict)
    #: Position of a named enum -> the position of each value.
    value_pos: dict[Position, tuple[Position, ...]] = field(default_factory=dict)
    #: Names of declarations that failed to parse (references to them are not reported
    #: again as unknown: the syntax error already explains them).
    broken_names: set[str] = field(default_factory=set)
    #: Positions of declarations and rpcs with an option that failed to build (the
    #: validator does not report that option as missing: the build error explains it).
    damaged: set[Position] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        """Return True when the file has no error-severity diagnostic."""
        return not any(d.severity == "error" for d in self.diagnostics)


_FORMATS = ("email", "url", "uuid")


class Builder:
    """Turn :class:`Raw` parse results of one file into nodes, checking attribute shapes."""

    def __init__(self, loc: Locator, comments: list[Comment], out: ParsedFile) -> None:
        self.loc = loc
        self.offset = 0
        self.out = out
        self.docs = {c.line: c.text for c in comments if c.standalone}
        self.entities: list[Entity] = []
        self.messages: list[Message] = []
        self.enums: list[Enum] = []
        self.services: list[Service] = []
        self.jobs: list[Job] = []
        self.schedules: list[Schedule] = []
        self.sagas: list[Saga] = []

    # -- helpers

    def pos(self, raw: Raw) -> Position:
        return self.loc.pos(self.offset + raw.loc)

    def error(self, raw: Raw, message: str, phase: str = "parse") -> None:
        self.out.diagnostics.append(Diagnostic(self.pos(raw), phase, message))

    def doc(self, raw: Raw) -> str:
        """Return the comment lines right above ``raw`` when it starts its line."""
        offset = self.offset + raw.loc
        if not self.loc.first_on_line(offset):
            return ""
        pos = self.loc.pos(offset)
        lines: list[str] = []
        line = pos.line - 1
        while line in self.docs:
            text = self.docs[line][2:]
            lines.append(text[1:] if text.startswith(" ") else text)
            line -= 1
        return "\n".join(reversed(lines))

    def end(self, owner: Position, raw: Raw) -> None:
        self.out.ends[owner] = self.pos(raw)

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

    def type_ref(self, raw: Raw) -> TypeRef:
        items = raw.items
        optional = items[-1] == "?"
        if raw.kind == "list_type":
            element = SCALAR_ALIASES.get(items[1], items[1])
            return TypeRef(element, self.pos(raw), optional, is_list=True)
        if items[0] == "enum" and len(items) == 3 and isinstance(items[1], list):
            return TypeRef("enum", self.pos(raw), optional, tuple(items[1]))
        return TypeRef(SCALAR_ALIASES.get(items[0], items[0]), self.pos(raw), optional)

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

    # -- jobs, schedules, sagas

    def options(self, raws: list[Any], owner: Position, what: str) -> dict[str, Raw]:
        """Return a block's options by label; unknown and repeated labels are errors."""
        allowed = BACKGROUND_OPTIONS[what]
        found: dict[str, Raw] = {}
        labels: dict[str, Position] = {}
        for opt in raws:
            if not isinstance(opt, Raw) or opt.kind != "option":
                continue
            label = opt.items[0]
            if label not in allowed:
                self.out.damaged.add(owner)
                hint = did_you_mean(label, allowed)
                self.error(
                    opt,
                    f'unknown {what} option "{label}"{hint}; expected one of {", ".join(allowed)}',
                )
                continue
            if label in found:
                self.error(opt, f"duplicate {what} option {label}")
                continue
            found[label] = opt
            labels[label] = self.pos(opt)
        if labels:
            self.out.option_pos[owner] = labels
        return found

    def single_value(self, opt: Raw, what: str) -> Raw | None:
        values = opt.items[1]
        if len(values) != 1:
            self.error(opt, f"{opt.items[0]}: takes one value ({what})")
            return None
        return values[0]

    def _job(self, raw: Raw) -> None:
        pos = self.pos(raw)
        _, name, param_raws, body = raw.items
        params = tuple(self.param(p) for p in param_raws)
        queue: str | None = None
        retry: Retry | None = None
        if body is not None:
            self.end(pos, body.items[-1])
            opts = self.options(body.items[:-1], pos, "job")
            if "queue" in opts:
                value = self.single_value(opts["queue"], "a queue name")
                if value is not None and value.kind == "str":
                    shown = value.items[0]
                    self.error(
                        value,
                        f"queue: takes a bare name, not a string (write queue: {shown})"
                        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", shown)
                        else "queue: takes a bare name, not a string",
                    )
                elif value is not None and value.kind != "ident":
                    self.error(value, "queue: takes a bare name, e.g. queue: emails")
                elif value is not None:
                    queue = value.items[0]
            if "retry" in opts:
                retry = self.retry(opts["retry"])
        self.jobs.append(Job(name, params, pos, queue, retry, doc=self.doc(raw)))

    def retry(self, opt: Raw) -> Retry | None:
        attempts: int | None = None
        kind: str | None = None
        base: float | None = None
        base_text: str | None = None
        seen: set[str] = set()
        for item in opt.items[1]:
            if item.kind != "call" or item.items[0] not in ("max_attempts", "backoff"):
                shown = item.items[0] if item.kind in ("call", "ident") else "this value"
                hint = did_you_mean(str(shown), ("max_attempts", "backoff"))
                self.error(
                    item,
                    f"unknown retry setting {shown}{hint}; expected max_attempts(n) and "
                    "backoff(exponential, base: <duration>)",
                )
                continue
            setting = item.items[0]
            if setting in seen:
                self.error(item, f"duplicate retry setting {setting}")
                continue
            seen.add(setting)
            args = item.items[1]
            if setting == "max_attempts":
                value = args[0].items[1] if len(args) == 1 and args[0].items[0] is None else None
                if (
                    value is None
                    or value.kind != "num"
                    or not isinstance(value.items[0], int)
                    or value.items[0] <= 0
                ):
                    self.error(item, "max_attempts(n) takes one integer greater than 0")
                    continue
                attempts = value.items[0]
                continue
            kind_given = False
            for arg in args:
                key, value = arg.items
                if key is None:
                    kind_given = True
                    if kind is not None or value.kind != "ident":
                        self.error(value, "backoff(...) takes the kind first: backoff(exponential)")
                    elif value.items[0] != "exponential":
                        hint = did_you_mean(value.items[0], ("exponential",))
                        self.error(
                            value,
                            f"unknown backoff kind {value.items[0]}{hint}; exponential is the "
                            "only kind",
                        )
                    else:
                        kind = "exponential"
                elif key != "base":
                    self.error(arg, f"unknown backoff argument {key}{did_you_mean(key, ('base',))}")
                elif value.kind != "dur":
                    self.error(value, "base: takes a duration, e.g. base: 30s")
                else:
                    base_text = value.items[0]
                    base = duration_seconds(base_text)
            if kind is None and not kind_given:
                self.error(item, "backoff(...) needs its kind: backoff(exponential, base: 30s)")
        return Retry(self.pos(opt), attempts, kind, base, base_text)

    def _schedule(self, raw: Raw) -> None:
        pos = self.pos(raw)
        name = raw.items[1]
        self.end(pos, raw.items[-1])
        opts = self.options(raw.items[2:-1], pos, "schedule")
        cron: str | None = None
        cron_pos: Position | None = None
        dispatch: JobCall | None = None
        unknown_option = pos in self.out.damaged
        if "cron" in opts:
            value = self.single_value(opts["cron"], 'a string such as "0 8 * * *"')
            if value is not None and value.kind != "str":
                self.error(value, 'cron: takes a string, e.g. cron: "0 8 * * 1-5"')
            elif value is not None:
                cron, cron_pos = value.items[0], self.pos(value)
        if "dispatch" in opts:
            value = self.single_value(opts["dispatch"], "a job call")
            if value is not None and value.kind == "ident":
                self.error(value, f"dispatch: calls a job: write {value.items[0]}(...)")
            elif value is not None and value.kind != "call":
                self.error(value, "dispatch: calls a job, e.g. dispatch: SendDigest()")
            elif value is not None:
                dispatch = self.job_call(value)
        built = ("cron" not in opts or cron is not None) and ("dispatch" not in opts or dispatch)
        if not built or unknown_option:
            self.out.damaged.add(pos)
        self.schedules.append(Schedule(name, pos, cron, cron_pos, dispatch, doc=self.doc(raw)))

    def job_call(self, raw: Raw) -> JobCall | None:
        values: list[str | int | float | bool] = []
        positions: list[Position] = []
        bare: list[bool] = []
        ok = True
        for arg in raw.items[1]:
            key, value = arg.items
            if key is not None:
                self.error(arg, "dispatch arguments are positional (the job's parameters in order)")
                ok = False
            elif value.kind == "call":
                self.error(
                    value,
                    f"nested call {value.items[0]}(...) in a dispatch argument; arguments "
                    "are literals",
                )
                ok = False
            elif value.kind in ("ref", "dur"):
                self.error(value, "dispatch arguments are literals (strings, numbers, true, false)")
                ok = False
            else:
                values.append(value.items[0])
                positions.append(self.pos(value))
                bare.append(value.kind == "ident")
        if not ok:
            return None
        return JobCall(raw.items[0], tuple(values), self.pos(raw), tuple(positions), tuple(bare))

    def _saga(self, raw: Raw) -> None:
        pos = self.pos(raw)
        self.end(pos, raw.items[-1])
        steps = tuple(
            self.step(r) for r in raw.items[2:-1] if isinstance(r, Raw) and r.kind == "step"
        )
        self.sagas.append(Saga(raw.items[1], pos, steps, doc=self.doc(raw)))

    def step(self, raw: Raw) -> SagaStep:
        pos = self.pos(raw)
        self.end(pos, raw.items[-1])
        opts = self.options(raw.items[2:-1], pos, "step")
        refs: dict[str, RpcRef | None] = {}
        for label in ("execute", "compensate"):
            if label not in opts:
                continue
            value = self.single_value(opts[label], "Service.Rpc")
            if value is not None and value.kind == "ref":
                refs[label] = RpcRef(value.items[0], value.items[1], self.pos(value))
            else:
                self.out.damaged.add(pos)
                if value is not None:
                    self.error(value, f"{label}: names an rpc as Service.Rpc")
        pivot = False
        if "pivot" in opts:
            value = self.single_value(opts["pivot"], "true or false")
            if value is not None and value.kind != "bool":
                self.error(value, "pivot: takes true or false")
            elif value is not None:
                pivot = value.items[0]
        return SagaStep(raw.items[1], pos, refs.get("execute"), refs.get("compensate"), pivot)

    def param(self, raw: Raw) -> Param:
        name, type_raw, *attr_raws = raw.items
        attrs = self.attributes(attr_raws, "rpc parameter")
        return Param(
            name,
            self.type_ref(type_raw),
            self.pos(raw),
            validation=self.validation(attrs["validate"]) if "validate" in attrs else None,
        )

    # -- attributes

    def attributes(self, raws: list[Raw], place: str) -> dict[str, Raw]:
        found: dict[str, Raw] = {}
        for a in raws:
            name = a.items[0]
            if name not in ATTRIBUTE_PLACES:
                allowed = [k for k, v in ATTRIBUTE_PLACES.items() if place in v]
                hint = did_you_mean(name, allowed or ATTRIBUTE_PLACES)
                self.error(a, f"unknown attribute @{name}{hint}", "resolve")
            elif place not in ATTRIBUTE_PLACES[name]:
                where = " or ".join(ATTRIBUTE_PLACES[name])
                self.error(
                    a,
                    f"@{name} is not allowed on {article(place)}; it goes on {article(where)}",
                    "resolve",
                )
            elif name in found:
                self.error(a, f"duplicate attribute @{name}", "resolve")
            else:
                found[name] = a
        return found

    def args(self, attr: Raw) -> list[Raw]:
        return attr.items[1] if attr.items[1] is not None else []

    def positional(self, attr: Raw, kinds: tuple[str, ...], what: str) -> Raw | None:
        args = self.args(attr)
        if len(args) != 1 or args[0].items[0] is not None or args[0].items[1].kind not in kinds:
            self.error(attr, f"@{attr.items[0]} takes {what}", "resolve")
            return None
        return args[0].items[1]

    def flag(self, attr: Raw) -> bool:
        if self.args(attr):
            self.error(attr, f"@{attr.items[0]} takes no arguments", "resolve")
        return True

    def string(self, attr: Raw) -> str | None:
        value = self.positional(attr, ("str",), 'one string, e.g. @renamed_from("old_name")')
        return value.items[0] if value is not None else None

    def single_name(self, attr: Raw) -> str | None:
        value = self.positional(attr, ("ident", "str"), "one name")
        return value.items[0] if value is not None else None

    def default(self, attr: Raw) -> Default | None:
        value = self.positional(
            attr,
            ("call", "str", "num", "bool", "ident"),
            "one value: now(), a literal or an enum value",
        )
        if value is None:
            return None
        pos = self.pos(value)
        if value.kind == "call":
            if value.items[0] != "now":
                self.error(
                    value,
                    f"unknown function {value.items[0]}(); only now() is supported",
                    "resolve",
                )
                return None
            return Default(pos, "now")
        if value.kind == "ident":
            return Default(pos, "enum", value.items[0])
        return Default(pos, "literal", value.items[0])

    def validation(self, attr: Raw) -> Validation | None:
        rules: dict[str, Any] = {}
        for arg in self.args(attr):
            key, value = arg.items
            if key is None:
                self.error(
                    arg, f"@validate takes named rules ({', '.join(VALIDATE_RULES)})", "resolve"
                )
                continue
            if key not in VALIDATE_RULES:
                self.error(
                    arg,
                    f"unknown @validate rule {key}{did_you_mean(key, VALIDATE_RULES)}",
                    "resolve",
                )
                continue
            if key in rules:
                self.error(arg, f"duplicate @validate rule {key}", "resolve")
                continue
            v = value.items[0]
            if key in ("min_len", "max_len"):
                if value.kind != "num" or not isinstance(v, int) or v < 0:
                    self.error(value, f"{key} must be a non-negative integer", "resolve")
                    continue
            elif key == "format":
                if value.kind != "str" or v not in _FORMATS:
                    shown = v if isinstance(v, str) else str(v)
                    self.error(
                        value,
                        f'unknown format "{shown}"{did_you_mean(shown, _FORMATS)}; '
                        'expected "email", "url" or "uuid"',
                        "resolve",
                    )
                    continue
            elif value.kind != "num":
                self.error(value, f"{key} must be a number", "resolve")
                continue
            rules[key] = v
        if not rules:
            if not self.args(attr):
                self.error(attr, "@validate needs at least one rule", "resolve")
            return None
        return Validation(self.pos(attr), **rules)


_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float:
    """Return the seconds of a duration literal (``30s`` -> 30.0, ``250ms`` -> 0.25)."""
    m = re.fullmatch(r"([0-9]+)(ns|us|ms|s|m|h)", text)
    if m is None:
        raise ValueError(f"not a duration: {text}")
    return int(m.group(1)) * _UNITS[m.group(2)]


def article(place: str) -> str:
    return ("an " if place[0] in "aeiou" else "a ") + place

"""The schema's syntax tree: frozen dataclasses that every compiler stage shares.

``grammar.py`` builds these from text, ``validate.py`` checks them and resolves names, and
each backend reads a :class:`Schema` and returns files. Every node carries the
:class:`Position` of its first token, so any stage can report ``file:line:col``.

Nodes are immutable and hold tuples, never lists, so a parsed schema can be shared between
backends (and hashed) without one backend disturbing another.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from .statuses import ERROR_STATUS

__all__ = [
    "HTTP_METHODS",
    "SCALARS",
    "SCALAR_ALIASES",
    "Auth",
    "Default",
    "Diagnostic",
    "Entity",
    "Enum",
    "ErrorCode",
    "Field",
    "HttpBinding",
    "Index",
    "Job",
    "JobCall",
    "Message",
    "Module",
    "Param",
    "Permission",
    "Position",
    "Relation",
    "Retry",
    "Rpc",
    "RpcRef",
    "Saga",
    "SagaStep",
    "Schedule",
    "Schema",
    "Service",
    "SourceFile",
    "TypeRef",
    "Validation",
    "permission_lookup_param",
    "plural_table_name",
    "snake_case",
]

#: The scalar types of the language (spec's four plus the original's extensions).
SCALARS: tuple[str, ...] = (
    "uuid",
    "string",
    "bool",
    "bytes",
    "json",
    "int32",
    "int64",
    "float32",
    "float64",
    "timestamp",
    "date",
)
#: Accepted spellings that mean a scalar (``datetime`` is ``timestamp``).
SCALAR_ALIASES: dict[str, str] = {"datetime": "timestamp", "int": "int64", "float": "float64"}
HTTP_METHODS: tuple[str, ...] = ("GET", "POST", "PUT", "PATCH", "DELETE")

#: The gRPC-canonical ``errors:`` codes and their HTTP statuses live in :mod:`.statuses`
#: (import-free: the batteries read the same table at ``django.setup()``).


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A 1-based line and column in a named file; orders by (file, line, col)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        """Return ``file:line:col``."""
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True, order=True)
class Diagnostic:
    """One problem found in a schema; ``str()`` is ``file:line:col: [phase] message``."""

    pos: Position
    #: ``lex``, ``parse``, ``resolve`` or a backend name.
    phase: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        """Return the one-line text form used by every command.

        File names and echoed schema text are shown with control characters escaped, so
        a diagnostic can neither drive the terminal nor forge a second line.
        """
        from .escaping import terminal_text

        prefix = "warning: " if self.severity == "warning" else ""
        return terminal_text(f"{self.pos}: [{self.phase}] {prefix}{self.message}")


@dataclass(frozen=True, slots=True)
class TypeRef:
    """A field's or parameter's type: a scalar, a named type, or an inline enum."""

    #: Canonical scalar name (aliases resolved), or an entity/message/enum name; ``"enum"``
    #: for an inline ``enum(a, b)``.
    name: str
    pos: Position
    optional: bool = False
    #: Values of an inline enum (empty otherwise).
    enum_values: tuple[str, ...] = ()
    #: ``[string]``: a list whose elements are :attr:`name` (a scalar); ``optional`` is
    #: then the list's own ``?``.
    is_list: bool = False

    @property
    def element(self) -> TypeRef:
        """Return the element type of a list (required), or the type itself."""
        if not self.is_list:
            return self
        return TypeRef(self.name, self.pos, False, self.enum_values)

    @property
    def is_scalar(self) -> bool:
        """Return True for one of :data:`SCALARS`."""
        return self.name in SCALARS

    @property
    def is_inline_enum(self) -> bool:
        """Return True for ``enum(a, b)`` written in place."""
        return self.name == "enum" and bool(self.enum_values)


@dataclass(frozen=True, slots=True)
class Validation:
    """The rules of one ``@validate(...)`` (all optional; ``None`` means not given)."""

    pos: Position
    min_len: int | None = None
    max_len: int | None = None
    #: ``"email"``, ``"url"`` or ``"uuid"``.
    format: str | None = None
    gt: float | int | None = None
    gte: float | int | None = None
    lt: float | int | None = None
    lte: float | int | None = None

    @property
    def is_empty(self) -> bool:
        """Return True when no rule is set."""
        return all(
            v is None
            for v in (self.min_len, self.max_len, self.format, self.gt, self.gte, self.lt, self.lte)
        )


@dataclass(frozen=True, slots=True)
class Default:
    """A ``@default(...)``: ``now()``, a literal, or an enum value name."""

    pos: Position
    #: ``"now"`` for ``now()``, ``"literal"`` for a string/number, ``"enum"`` for a bare name.
    kind: Literal["now", "literal", "enum"]
    #: The literal (str, int or float) or the enum value's name; ``None`` for ``now()``.
    value: str | int | float | None = None


@dataclass(frozen=True, slots=True)
class Field:
    """One field of an entity or message."""

    name: str
    type: TypeRef
    pos: Position
    primary: bool = False
    unique: bool = False
    default: Default | None = None
    validation: Validation | None = None
    #: From ``@renamed_from("old")``.
    renamed_from: str | None = None
    doc: str = ""

    @property
    def optional(self) -> bool:
        """Return True for ``name: type?``."""
        return self.type.optional

    @property
    def max_len(self) -> int | None:
        """Return the ``@validate(max_len)`` bound, used for ``varchar(N)``."""
        return self.validation.max_len if self.validation else None


@dataclass(frozen=True, slots=True)
class Relation:
    """``has_many`` / ``has_one`` / ``belongs_to`` / ``many_to_many`` inside an entity."""

    kind: Literal["has_many", "has_one", "belongs_to", "many_to_many"]
    name: str
    target: str
    pos: Position
    #: The foreign-key column (``@foreign_key(user_id)``); ``None`` for many_to_many.
    foreign_key: str | None = None
    #: ``restrict`` (default), ``cascade`` or ``set_null``.
    on_delete: str = "restrict"
    #: ``many_to_many`` only: ``{ join_table: name }``.
    join_table: str | None = None


@dataclass(frozen=True, slots=True)
class Index:
    """``index(a, b) [@unique]`` inside an entity."""

    columns: tuple[str, ...]
    pos: Position
    unique: bool = False


@dataclass(frozen=True, slots=True)
class Entity:
    """An ``entity``: a table."""

    name: str
    pos: Position
    fields: tuple[Field, ...] = ()
    relations: tuple[Relation, ...] = ()
    indexes: tuple[Index, ...] = ()
    #: ``@schema(x)``; ``None`` means the module's default (``public`` for the root module).
    db_schema: str | None = None
    doc: str = ""

    @property
    def table_name(self) -> str:
        """Return the plural snake-case table name (``OrderItem`` -> ``order_items``)."""
        return plural_table_name(self.name)

    @property
    def primary_fields(self) -> tuple[Field, ...]:
        """Return the ``@primary`` fields in declaration order."""
        return tuple(f for f in self.fields if f.primary)

    def field(self, name: str) -> Field | None:
        """Return the field called ``name``, or None."""
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True, slots=True)
class Message:
    """A ``message``: a payload shape that never becomes a table."""

    name: str
    pos: Position
    fields: tuple[Field, ...] = ()
    doc: str = ""

    def field(self, name: str) -> Field | None:
        """Return the field called ``name``, or None."""
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True, slots=True)
class Enum:
    """A named ``enum Name { a, b }``."""

    name: str
    values: tuple[str, ...]
    pos: Position
    doc: str = ""


@dataclass(frozen=True, slots=True)
class Param:
    """An rpc parameter ``name: type [@validate(...)]``."""

    name: str
    type: TypeRef
    pos: Position
    validation: Validation | None = None


@dataclass(frozen=True, slots=True)
class HttpBinding:
    """``http: METHOD "/path/{param}"``."""

    method: str
    path: str
    pos: Position

    @property
    def path_params(self) -> tuple[str, ...]:
        """Return the ``{name}`` segments of the path in order."""
        return tuple(re.findall(r"\{([^{}]*)\}", self.path))


@dataclass(frozen=True, slots=True)
class Auth:
    """``auth: none | required | required(roles: {a, b})``."""

    pos: Position
    required: bool
    roles: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Permission:
    """``permission: check("action", resource: Entity, owner_field: field)`` or ``none``.

    ``permission: none`` (``check`` False) marks a route deliberately open to every
    caller the ``auth:`` option lets in (or to everyone without ``auth:``), which
    satisfies secure-by-default like ``auth: none``. A ``check`` asks the permission
    battery ``services.permission().check(subject, action, resource)``; with
    ``resource`` the generated view loads that entity by its primary key (see
    :func:`permission_lookup_param`) and passes the loaded object, so an owned-only rule
    compares ``owner_field`` with the caller's subject id.
    """

    pos: Position
    #: True for ``check(...)``, False for ``permission: none``.
    check: bool
    #: The checked action (``"post.edit"``); ``None`` for ``none``.
    action: str | None = None
    #: The entity name given as ``resource:``; ``None`` when not given.
    resource: str | None = None
    #: The field of ``resource`` that holds the owner's subject id; ``None`` when not given.
    owner_field: str | None = None
    #: Positions of the ``resource:`` and ``owner_field:`` values (diagnostics point there).
    resource_pos: Position | None = None
    owner_field_pos: Position | None = None


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One entry of ``errors: { not_found, invalid_argument("msg") }``."""

    code: str
    pos: Position
    message: str | None = None

    @property
    def status(self) -> int:
        """Return the HTTP status of the code (500 for an unknown one)."""
        return ERROR_STATUS.get(self.code, 500)


@dataclass(frozen=True, slots=True)
class Rpc:
    """``rpc Name(params) -> Return { http: ...; auth: ...; paginated: ...; errors: ... }``."""

    name: str
    params: tuple[Param, ...]
    returns: TypeRef
    pos: Position
    http: HttpBinding | None = None
    auth: Auth | None = None
    #: ``permission: check(...)`` or ``permission: none``; ``None`` when not written.
    permission: Permission | None = None
    paginated: bool = False
    errors: tuple[ErrorCode, ...] = ()
    doc: str = ""


@dataclass(frozen=True, slots=True)
class Service:
    """A ``service`` and its rpcs."""

    name: str
    pos: Position
    rpcs: tuple[Rpc, ...] = ()
    doc: str = ""


@dataclass(frozen=True, slots=True)
class Retry:
    """``retry: max_attempts(n), backoff(exponential, base: 30s)`` (either part optional)."""

    pos: Position
    #: ``max_attempts(n)``; ``None`` means the queue battery's default.
    max_attempts: int | None = None
    #: The backoff kind; ``exponential`` is the only one the language has.
    backoff: str | None = None
    #: ``base:`` of the backoff in seconds (``30s`` -> 30.0).
    backoff_base: float | None = None
    #: ``base:`` as written (``30s``), kept for ``fmt``.
    backoff_base_text: str | None = None


@dataclass(frozen=True, slots=True)
class Job:
    """``job Name(params) { queue: q  retry: ... }``: a background job stub and dispatcher."""

    name: str
    params: tuple[Param, ...]
    pos: Position
    #: ``queue:`` (a bare identifier); ``None`` means the queue battery's default queue.
    queue: str | None = None
    retry: Retry | None = None
    doc: str = ""


@dataclass(frozen=True, slots=True)
class JobCall:
    """``dispatch: Job(args)`` inside a schedule: literal arguments only."""

    job: str
    #: Literal values (str, int, float, bool) in order.
    args: tuple[str | int | float | bool, ...]
    pos: Position
    #: Positions of the arguments (diagnostics point there).
    arg_positions: tuple[Position, ...] = ()
    #: True for an argument written as a bare name (an enum value), not a string.
    arg_bare: tuple[bool, ...] = ()


@dataclass(frozen=True, slots=True)
class Schedule:
    """``schedule Name { cron: "<spec>"  dispatch: Job(args) }``."""

    name: str
    pos: Position
    cron: str | None = None
    cron_pos: Position | None = None
    dispatch: JobCall | None = None
    doc: str = ""


@dataclass(frozen=True, slots=True)
class RpcRef:
    """``Service.Rpc`` named by a saga step."""

    service: str
    rpc: str
    pos: Position

    def __str__(self) -> str:
        """Return ``Service.Rpc``."""
        return f"{self.service}.{self.rpc}"


@dataclass(frozen=True, slots=True)
class SagaStep:
    """``step s { execute: Svc.Rpc  compensate: Svc.Rpc  pivot: true }``."""

    name: str
    pos: Position
    execute: RpcRef | None = None
    compensate: RpcRef | None = None
    pivot: bool = False


@dataclass(frozen=True, slots=True)
class Saga:
    """``saga Name { step ... }``: compensating steps run by the workflow battery."""

    name: str
    pos: Position
    steps: tuple[SagaStep, ...] = ()
    doc: str = ""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """The declarations of one parsed file, in source order."""

    path: str
    entities: tuple[Entity, ...] = ()
    messages: tuple[Message, ...] = ()
    enums: tuple[Enum, ...] = ()
    services: tuple[Service, ...] = ()
    jobs: tuple[Job, ...] = ()
    schedules: tuple[Schedule, ...] = ()
    sagas: tuple[Saga, ...] = ()


@dataclass(frozen=True, slots=True)
class Module:
    """The files of one schema directory, merged.

    ``schema/app.toolkit`` is the root module (``name == ""``, labelled ``default``);
    ``schema/billing/x.toolkit`` is module ``billing``; ``schema/v1/iam/x.toolkit`` is
    version ``v1``, module ``iam``.
    """

    name: str = ""
    version: str = ""
    files: tuple[SourceFile, ...] = ()
    entities: tuple[Entity, ...] = ()
    messages: tuple[Message, ...] = ()
    enums: tuple[Enum, ...] = ()
    services: tuple[Service, ...] = ()
    jobs: tuple[Job, ...] = ()
    schedules: tuple[Schedule, ...] = ()
    sagas: tuple[Saga, ...] = ()

    @property
    def label(self) -> str:
        """Return the name used in outputs: ``default`` for the root module."""
        return self.name or "default"

    @property
    def declarations(self) -> Iterator[Entity | Message | Enum | Service | Job | Schedule | Saga]:
        """Yield every named declaration, entities first and sagas last, group by group."""
        for group in (
            self.entities,
            self.messages,
            self.enums,
            self.services,
            self.jobs,
            self.schedules,
            self.sagas,
        ):
            yield from group


@dataclass(frozen=True, slots=True)
class Schema:
    """A whole compile: every module, in (version, name) order."""

    modules: tuple[Module, ...] = field(default_factory=tuple)

    @property
    def entities(self) -> tuple[Entity, ...]:
        """Return every entity of every module (names are global)."""
        return tuple(e for m in self.modules for e in m.entities)

    @property
    def messages(self) -> tuple[Message, ...]:
        """Return every message of every module."""
        return tuple(x for m in self.modules for x in m.messages)

    @property
    def enums(self) -> tuple[Enum, ...]:
        """Return every named enum of every module."""
        return tuple(x for m in self.modules for x in m.enums)

    @property
    def services(self) -> tuple[Service, ...]:
        """Return every service of every module."""
        return tuple(x for m in self.modules for x in m.services)

    @property
    def jobs(self) -> tuple[Job, ...]:
        """Return every job of every module (names are global)."""
        return tuple(x for m in self.modules for x in m.jobs)

    @property
    def schedules(self) -> tuple[Schedule, ...]:
        """Return every schedule of every module."""
        return tuple(x for m in self.modules for x in m.schedules)

    @property
    def sagas(self) -> tuple[Saga, ...]:
        """Return every saga of every module."""
        return tuple(x for m in self.modules for x in m.sagas)

    def job(self, name: str) -> Job | None:
        """Return the job called ``name``, or None."""
        return next((x for x in self.jobs if x.name == name), None)

    def module_of(self, name: str) -> Module | None:
        """Return the module declaring the entity, message, enum, service or job ``name``."""
        for m in self.modules:
            if any(d.name == name for d in m.declarations):
                return m
        return None

    def entity(self, name: str) -> Entity | None:
        """Return the entity called ``name``, or None."""
        return next((e for e in self.entities if e.name == name), None)

    def message(self, name: str) -> Message | None:
        """Return the message called ``name``, or None."""
        return next((x for x in self.messages if x.name == name), None)

    def enum(self, name: str) -> Enum | None:
        """Return the named enum called ``name``, or None."""
        return next((x for x in self.enums if x.name == name), None)


def permission_lookup_param(rpc: Rpc, entity: Entity) -> Param | None:
    """Return the rpc parameter that identifies the ``resource:`` object to load, or None.

    The rule (one for the validator and the generated views): the parameter named like
    the entity's single primary field (``id``), else ``<entity>_id`` (``note_id``). With
    none, the view checks the permission without a resource (collection routes such as
    create and list), so an owned-only rule never matches there.
    """
    primary = entity.primary_fields
    names = []
    if len(primary) == 1:
        names.append(primary[0].name)
    names.append(f"{snake_case(entity.name)}_id")
    for name in names:
        found = next((p for p in rpc.params if p.name == name), None)
        if found is not None:
            return found
    return None


def enforced_access(rpc: Rpc) -> dict[str, object]:
    """Return how a call of ``rpc`` is checked, as the generated view enforces it.

    ``{"auth": "required" | "none", "roles": [...], "permission": "<action>" | None}``.
    A ``permission: check(...)`` authenticates (401 without a bearer token) even without
    ``auth:``, so it reports ``auth: required``: one answer for ``toolkit routes``,
    ``explain``, the handler stubs and the generated views.
    """
    auth, permission = rpc.auth, rpc.permission
    checked = permission is not None and permission.check
    required = (auth is not None and auth.required) or checked
    return {
        "auth": "required" if required else "none",
        "roles": list(auth.roles) if auth is not None else [],
        "permission": (permission.action or "") if checked and permission is not None else None,
    }


def access_text(rpc: Rpc) -> str:
    """Return :func:`enforced_access` as text: ``required (roles: a), permission: note.edit``."""
    access = enforced_access(rpc)
    text = str(access["auth"])
    roles = access["roles"]
    if roles:
        text += f" (roles: {', '.join(roles)})"  # type: ignore[arg-type]
    if access["permission"]:
        text += f", permission: {access['permission']}"
    return text


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """Return ``OrderItem`` -> ``order_item``, ``HTTPServer`` -> ``http_server``."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def plural_table_name(entity: str) -> str:
    """Return the naive plural snake-case table name, as the original toolkit does.

    ``User`` -> ``users``, ``Category`` -> ``categories``, ``Box`` -> ``boxes``,
    ``Person`` -> ``persons`` (no irregular plurals, so names stay predictable).
    """
    base = snake_case(entity)
    if base.endswith("y") and len(base) > 1 and base[-2] not in "aeiou":
        return base[:-1] + "ies"
    if base.endswith(("s", "x", "z", "ch", "sh")):
        return base + "es"
    return base + "s"

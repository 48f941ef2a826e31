"""The schema's syntax tree: frozen dataclasses that every compiler stage shares.

``grammar.py`` builds these from text, ``validate.py`` checks them and resolves names, and
each backend reads a :class:`Schema` and returns files. Every node carries the
:class:`Position` of its first token, so any stage can report ``file:line:col``.

Nodes are immutable and hold tuples, never lists, so a parsed schema can be shared between
backends (and hashed) without one backend disturbing another.
"""

from __future__ import annotations

import re
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
    "Message",
    "Module",
    "Param",
    "Position",
    "Relation",
    "Rpc",
    "Schema",
    "Service",
    "SourceFile",
    "TypeRef",
    "Validation",
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
SCALAR_ALIASES: dict[str, str] = {"datetime": "timestamp"}
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
        """Return the one-line text form used by every command."""
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{self.pos}: [{self.phase}] {prefix}{self.message}"


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
class SourceFile:
    """The declarations of one parsed file, in source order."""

    path: str
    entities: tuple[Entity, ...] = ()
    messages: tuple[Message, ...] = ()
    enums: tuple[Enum, ...] = ()
    services: tuple[Service, ...] = ()


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

    @property
    def label(self) -> str:
        """Return the name used in outputs: ``default`` for the root module."""
        return self.name or "default"


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

    def module_of(self, name: str) -> Module | None:
        """Return the module declaring the entity, message, enum or service ``name``."""
        for m in self.modules:
            for group in (m.entities, m.messages, m.enums, m.services):
                if any(d.name == name for d in group):
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

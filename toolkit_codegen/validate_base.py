"""The state and the shared type rules of the schema checker (phase ``resolve``).

:class:`CheckerBase` holds what every construct's checks read: the declared names and
their kinds, the diagnostics collected so far, and type resolution ("unknown type ...",
"did you mean"). The checks of each schema construct live beside it, one module per
construct (``validate_types``, ``validate_services``, ``validate_jobs``), so a reader
looking for the rules of rpcs does not page through those of entity defaults.
"""

from __future__ import annotations

import math
import re
import uuid
from datetime import date

from .grammar import did_you_mean
from .nodes import (
    SCALAR_ALIASES,
    SCALARS,
    Diagnostic,
    Entity,
    Enum,
    Job,
    Message,
    Position,
    Saga,
    Schedule,
    Schema,
    Service,
    TypeRef,
)

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


class CheckerBase:
    """The checker's state, its diagnostics and type resolution; subclassed per construct."""

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
        #: snake_case function name -> the job that took it (``SendDigest``, ``Send_digest``).
        self.job_functions: dict[str, str] = {}

    def error(self, pos: Position, message: str) -> None:
        self.diagnostics.append(Diagnostic(pos, "resolve", message))

    def warn(self, pos: Position, message: str) -> None:
        self.diagnostics.append(Diagnostic(pos, "resolve", message, "warning"))

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


def _an(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


#: The largest magnitude of each float type (IEEE 754 single and double precision).
FLOAT_LIMITS = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}


def finite_within(value: int | float, limit: float = FLOAT_LIMITS["float64"]) -> bool:
    """Return True when ``value`` is a finite number no larger than ``limit`` in magnitude.

    A literal beyond it would be written as ``inf`` (a NameError in Python, not a number
    in SQL or JSON) or overflow when a backend converts it.
    """
    try:
        number = float(value)
    except OverflowError:
        return False
    return math.isfinite(number) and abs(number) <= limit


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
        if not ok:
            return "expected a number"
        return (
            None
            if finite_within(value, FLOAT_LIMITS[type_name])
            else f"out of range for {type_name}"
        )
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

"""The builder's cursor and the attribute layer of the third pass (``@name(args)``).

:class:`BuilderBase` holds what every declaration's builder needs: positions relative to
the current chunk, doc comments, diagnostics, type references, parameters, and the
attributes (``@validate``, ``@default``, ...) with the checks of where each may appear
and which arguments it takes. The declarations themselves are built in ``building``
(entities, messages, enums, services) and ``building_background`` (jobs, schedules,
sagas).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .nodes import (
    SCALAR_ALIASES,
    Default,
    Diagnostic,
    Entity,
    Enum,
    Job,
    Message,
    Param,
    Position,
    Saga,
    Schedule,
    Service,
    SourceFile,
    TypeRef,
    Validation,
)
from .scanning import (
    ATTRIBUTE_PLACES,
    VALIDATE_RULES,
    Comment,
    Locator,
    did_you_mean,
)
from .syntax import Raw

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


class BuilderBase:
    """Positions, doc comments, types, parameters and attributes of one file's nodes."""

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

    def type_ref(self, raw: Raw) -> TypeRef:
        items = raw.items
        optional = items[-1] == "?"
        if raw.kind == "list_type":
            element = SCALAR_ALIASES.get(items[1], items[1])
            return TypeRef(element, self.pos(raw), optional, is_list=True)
        if items[0] == "enum" and len(items) == 3 and isinstance(items[1], list):
            return TypeRef("enum", self.pos(raw), optional, tuple(items[1]))
        return TypeRef(SCALAR_ALIASES.get(items[0], items[0]), self.pos(raw), optional)

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

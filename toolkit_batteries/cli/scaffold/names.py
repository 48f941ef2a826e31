"""The name rules of the scaffolding commands, each failing with exit 3 and a reason.

Names that become paths go through :func:`~toolkit_batteries.cli.paths.check_name` first
(no traversal, ever); the rules here add what Python or the schema language needs on top.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from ..output import InvalidInputError
from ..paths import check_name

__all__ = [
    "SCHEMA_RESERVED",
    "FieldSpec",
    "check_identifier",
    "check_package",
    "check_pascal",
    "parse_fields",
    "pascal_case",
    "snake_case",
]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

#: Reserved words of the schema language (docs/schema-language.md, "Lexical rules").
SCHEMA_RESERVED = frozenset(
    [
        "entity",
        "service",
        "job",
        "schedule",
        "rpc",
        "index",
        "enum",
        "has_many",
        "has_one",
        "belongs_to",
        "many_to_many",
        "message",
        "true",
        "false",
    ]
)

#: Directories the project template itself uses: a package of that name would merge with
#: them.
_TEMPLATE_DIRS = frozenset({"api", "accounts", "schema"})


def snake_case(name: str) -> str:
    """Return ``NightlyReport`` -> ``nightly_report`` (snake names pass through)."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def pascal_case(name: str) -> str:
    """Return ``acme_redis`` -> ``AcmeRedis`` (PascalCase names pass through)."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-]+", name) if part)


def check_identifier(name: str, what: str) -> str:
    """Return ``name`` if it is a Python identifier and not a keyword; raise otherwise."""
    check_name(name, what)
    if not _IDENTIFIER.fullmatch(name) or keyword.iskeyword(name):
        raise InvalidInputError(
            f"invalid {what} {name!r}: it must be an identifier (a letter or '_', then "
            "letters, digits or '_') and not a Python keyword"
        )
    return name


def check_pascal(name: str, what: str) -> str:
    """Return ``name`` if it is a PascalCase identifier usable in a schema; raise otherwise."""
    check_name(name, what)
    if not _PASCAL.fullmatch(name):
        raise InvalidInputError(
            f"invalid {what} {name!r}: use a PascalCase identifier such as {pascal_case(name)!r}"
            if _IDENTIFIER.fullmatch(name)
            else f"invalid {what} {name!r}: use a PascalCase identifier (letters and digits)"
        )
    return name


def check_package(name: str) -> str:
    """Return the Python package of project ``name`` (``-`` -> ``_``), or raise exit 3.

    The package is the settings package (``<package>/settings.py``) and is imported by
    name, so it must be an identifier, not a keyword, not one of the template's own
    directories, and must not shadow a module Python can already import (``django``,
    ``test``, ``toolkit_batteries``...), which would break the project's imports.
    """
    check_name(name, "project name")
    package = name.replace("-", "_")
    if not _IDENTIFIER.fullmatch(package) or keyword.iskeyword(package):
        raise InvalidInputError(
            f"invalid project name {name!r}: its package {package!r} must be a Python "
            "identifier (start with a letter or '_') and not a keyword"
        )
    if package in _TEMPLATE_DIRS:
        raise InvalidInputError(
            f"invalid project name {name!r}: the template already has a directory "
            f"{package!r}; choose another name"
        )
    from importlib.util import find_spec

    try:
        spec = find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        raise InvalidInputError(
            f"invalid project name {name!r}: package {package!r} would shadow the installed "
            f"Python module {package!r}; choose another name"
        )
    return package


@dataclass(frozen=True)
class FieldSpec:
    """One ``--field name:type`` (``type?`` marks it optional)."""

    name: str
    type: str
    optional: bool = False

    @property
    def text(self) -> str:
        """Return the type as written in a schema (``string?``)."""
        return self.type + ("?" if self.optional else "")


def parse_fields(
    values: list[str] | None,
    types: tuple[str, ...],
    *,
    aliases: dict[str, str] | None = None,
    reserved: frozenset[str] = frozenset(),
    taken: tuple[str, ...] = (),
    optional: bool = True,
) -> list[FieldSpec]:
    """Parse ``name:type`` flags; unknown types, bad or duplicate names are exit 3."""
    aliases = aliases or {}
    fields: list[FieldSpec] = []
    seen = set(taken)
    for raw in values or []:
        name, sep, kind = raw.partition(":")
        name, kind = name.strip(), kind.strip()
        if not sep or not name or not kind:
            raise InvalidInputError(f"invalid --field {raw!r}: write it as name:type")
        if not _IDENTIFIER.fullmatch(name) or keyword.iskeyword(name) or name in reserved:
            raise InvalidInputError(
                f"invalid field name {name!r}: use an identifier that is not a reserved word"
            )
        is_optional = optional and kind.endswith("?")
        base = kind[:-1] if is_optional else kind
        base = aliases.get(base, base)
        if base not in types:
            from toolkit_batteries.core.errors import did_you_mean

            raise InvalidInputError(
                f"invalid type {kind!r} for field {name!r}{did_you_mean(base, types)}; "
                f"types: {', '.join(types)}"
            )
        if name in seen:
            raise InvalidInputError(f"field {name!r} is given twice (or is a generated field)")
        seen.add(name)
        fields.append(FieldSpec(name, base, is_optional))
    return fields

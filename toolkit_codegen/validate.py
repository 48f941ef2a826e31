"""Resolve names and check a parsed schema, collecting every diagnostic (phase ``resolve``).

The checks follow the original compiler's resolver (reference facts, section 1): names are
global across modules, unknown names get a "did you mean", rpcs are secure by default,
inputs are validated everywhere (validate-everything-in), and attributes are checked
against the type they decorate. Nothing here raises on a well-formed tree: every problem
becomes a :class:`~toolkit_codegen.nodes.Diagnostic`.

The checks are split by schema construct: :mod:`.validate_base` (state, type
resolution), :mod:`.validate_types` (entities, fields, defaults, ``@validate``),
:mod:`.validate_services` (rpcs, HTTP bindings, options, inputs) and
:mod:`.validate_jobs` (jobs, schedules, sagas). This module holds the front door and the
order the checks run in.
"""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Iterable, Iterator
from typing import Any

from .grammar import sort_diagnostics
from .nodes import (
    Diagnostic,
    Entity,
    Enum,
    Field,
    Message,
    Param,
    Position,
    Relation,
    Schema,
    TypeRef,
)
from .validate_base import MAX_TYPE_DEPTH, _Decl
from .validate_jobs import JobChecks

__all__ = ["MAX_TYPE_DEPTH", "validate"]


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


class _Checker(JobChecks):
    """Every resolve-phase rule, run over a schema in declaration order."""

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

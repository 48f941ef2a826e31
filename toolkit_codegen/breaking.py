"""Compare two schemas and list what changed, flagging the changes that break clients.

The change kinds are exactly the original toolkit's (reference facts, section 3.4):

- breaking: ``module_removed``, ``entity_removed``, ``field_removed``,
  ``field_type_changed``, ``field_optionality_changed`` (optional -> required only),
  ``message_removed``, ``service_removed``, ``operation_removed``,
  ``operation_params_changed`` (count, name, order or type), ``operation_returns_changed``
  (type, or the paginated flag toggled), ``operation_http_changed`` (method or path
  changed, or the HTTP binding removed);
- informational: ``module_added``, ``entity_added``, ``field_added``, ``field_renamed``
  (through ``@renamed_from``), ``message_added``, ``service_added``, ``operation_added``,
  ``validate_added``.

Tighter validation (a smaller ``max_len``) is deliberately out of scope, as in the
original. Modules are matched by (version, name); declarations by name within a module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING

from .nodes import Field, Module, Param, Position, Rpc, Schema, TypeRef

if TYPE_CHECKING:
    from .compiler import LoadResult

__all__ = [
    "BREAKING_KINDS",
    "INFO_KINDS",
    "BreakingReport",
    "Change",
    "compare",
    "compare_paths",
]

BREAKING_KINDS: tuple[str, ...] = (
    "module_removed",
    "entity_removed",
    "field_removed",
    "field_type_changed",
    "field_optionality_changed",
    "message_removed",
    "service_removed",
    "operation_removed",
    "operation_params_changed",
    "operation_returns_changed",
    "operation_http_changed",
)
INFO_KINDS: tuple[str, ...] = (
    "module_added",
    "entity_added",
    "field_added",
    "field_renamed",
    "message_added",
    "service_added",
    "operation_added",
    "validate_added",
)


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the old and the new schema."""

    kind: str
    message: str
    breaking: bool
    #: Where to look: in the new schema, or in the old one for a removal.
    pos: Position | None = None

    def __str__(self) -> str:
        """Return ``message (kind)``, the line the ``breaking`` command prints."""
        return f"{self.message} ({self.kind})"


def _label(module: Module) -> str:
    return f"{module.version}/{module.label}" if module.version else module.label


def _type(ref: TypeRef) -> str:
    return f"enum({', '.join(ref.enum_values)})" if ref.name == "enum" else ref.name


class _Diff:
    def __init__(self) -> None:
        self.changes: list[Change] = []

    def add(self, kind: str, message: str, pos: Position | None) -> None:
        self.changes.append(Change(kind, message, kind in BREAKING_KINDS, pos))

    def schemas(self, old: Schema, new: Schema) -> None:
        old_modules = {(m.version, m.name): m for m in old.modules}
        new_modules = {(m.version, m.name): m for m in new.modules}
        for key, module in old_modules.items():
            if key not in new_modules:
                pos = Position(module.files[0].path, 1, 1) if module.files else None
                self.add("module_removed", f"module {_label(module)} removed", pos)
        for key, module in new_modules.items():
            if key not in old_modules:
                pos = Position(module.files[0].path, 1, 1) if module.files else None
                self.add("module_added", f"module {_label(module)} added", pos)
            else:
                self.module(old_modules[key], module)

    def module(self, old: Module, new: Module) -> None:
        old_entities = {e.name: e for e in old.entities}
        new_entities = {e.name: e for e in new.entities}
        for name, entity in old_entities.items():
            if name not in new_entities:
                self.add("entity_removed", f"entity {name} removed", entity.pos)
        for name, entity in new_entities.items():
            if name not in old_entities:
                self.add("entity_added", f"entity {name} added", entity.pos)
            else:
                self.fields(name, old_entities[name].fields, entity.fields)
        old_messages = {m.name: m for m in old.messages}
        new_messages = {m.name: m for m in new.messages}
        for name, message in old_messages.items():
            if name not in new_messages:
                self.add("message_removed", f"message {name} removed", message.pos)
        for name, message in new_messages.items():
            if name not in old_messages:
                self.add("message_added", f"message {name} added", message.pos)
            else:
                self.fields(name, old_messages[name].fields, message.fields)
        old_services = {s.name: s for s in old.services}
        new_services = {s.name: s for s in new.services}
        for name, service in old_services.items():
            if name not in new_services:
                self.add("service_removed", f"service {name} removed", service.pos)
        for name, service in new_services.items():
            if name not in old_services:
                self.add("service_added", f"service {name} added", service.pos)
                continue
            old_rpcs = {r.name: r for r in old_services[name].rpcs}
            new_rpcs = {r.name: r for r in service.rpcs}
            for rpc_name, rpc in old_rpcs.items():
                if rpc_name not in new_rpcs:
                    self.add("operation_removed", f"operation {name}.{rpc_name} removed", rpc.pos)
            for rpc_name, rpc in new_rpcs.items():
                if rpc_name not in old_rpcs:
                    self.add("operation_added", f"operation {name}.{rpc_name} added", rpc.pos)
                else:
                    self.rpc(f"{name}.{rpc_name}", old_rpcs[rpc_name], rpc)

    def fields(self, owner: str, old: Sequence[Field], new: Sequence[Field]) -> None:
        old_by_name = {f.name: f for f in old}
        new_by_name = {f.name: f for f in new}
        renamed_from: dict[str, Field] = {}
        for f in new:
            source = f.renamed_from
            if (
                source
                and source in old_by_name
                and source not in new_by_name
                and f.name not in old_by_name
            ):
                renamed_from[source] = f
        for name, f in old_by_name.items():
            if name in renamed_from:
                target = renamed_from[name]
                self.add(
                    "field_renamed",
                    f"field {owner}.{name} renamed to {target.name}",
                    target.pos,
                )
                self.field(owner, f, target)
            elif name not in new_by_name:
                self.add("field_removed", f"field {owner}.{name} removed", f.pos)
            else:
                self.field(owner, f, new_by_name[name])
        targets = {f.name for f in renamed_from.values()}
        for name, f in new_by_name.items():
            if name not in old_by_name and name not in targets:
                self.add("field_added", f"field {owner}.{name} added", f.pos)

    def field(self, owner: str, old: Field, new: Field) -> None:
        where = f"{owner}.{new.name}"
        if _type_changed(old.type, new.type):
            self.add(
                "field_type_changed",
                f"field {where} changed type from {_type(old.type)} to {_type(new.type)}",
                new.pos,
            )
        if old.optional and not new.optional:
            self.add(
                "field_optionality_changed",
                f"field {where} changed from optional to required",
                new.pos,
            )
        if old.validation is None and new.validation is not None:
            self.add("validate_added", f"field {where} gained @validate", new.validation.pos)

    def rpc(self, label: str, old: Rpc, new: Rpc) -> None:
        if _signature(old.params) != _signature(new.params):
            before = ", ".join(f"{p.name}: {_param_type(p)}" for p in old.params)
            after = ", ".join(f"{p.name}: {_param_type(p)}" for p in new.params)
            self.add(
                "operation_params_changed",
                f"operation {label} parameters changed from ({before}) to ({after})",
                new.pos,
            )
        else:
            for before, after in zip(old.params, new.params, strict=True):
                if before.validation is None and after.validation is not None:
                    self.add(
                        "validate_added",
                        f"parameter {after.name} of operation {label} gained @validate",
                        after.validation.pos,
                    )
        if old.returns.name != new.returns.name:
            self.add(
                "operation_returns_changed",
                f"operation {label} now returns {new.returns.name} instead of {old.returns.name}",
                new.returns.pos,
            )
        elif old.paginated != new.paginated:
            state = "is now paginated" if new.paginated else "is no longer paginated"
            self.add("operation_returns_changed", f"operation {label} {state}", new.pos)
        if old.http is not None:
            if new.http is None:
                self.add(
                    "operation_http_changed",
                    f"operation {label} lost its HTTP binding ({old.http.method} {old.http.path})",
                    new.pos,
                )
            elif (old.http.method, old.http.path) != (new.http.method, new.http.path):
                self.add(
                    "operation_http_changed",
                    f"operation {label} moved from {old.http.method} {old.http.path} to "
                    f"{new.http.method} {new.http.path}",
                    new.http.pos,
                )


def _type_changed(old: TypeRef, new: TypeRef) -> bool:
    if old.name != new.name:
        return True
    # Adding a value to an inline enum keeps old data valid; removing one does not.
    return bool(set(old.enum_values) - set(new.enum_values))


def _param_type(p: Param) -> str:
    return _type(p.type) + ("?" if p.type.optional else "")


def _signature(params: Sequence[Param]) -> tuple[tuple[str, str, tuple[str, ...], bool], ...]:
    return tuple((p.name, p.type.name, p.type.enum_values, p.type.optional) for p in params)


def compare(old: Schema, new: Schema) -> list[Change]:
    """Return every change from ``old`` to ``new``, in a stable order."""
    diff = _Diff()
    diff.schemas(old, new)
    return diff.changes


@dataclass(frozen=True)
class BreakingReport:
    """Both loaded sides of a comparison and the changes between them."""

    old: LoadResult
    new: LoadResult
    changes: tuple[Change, ...]

    @property
    def ok(self) -> bool:
        """Return True when both sides loaded without errors (changes are meaningful)."""
        return self.old.ok and self.new.ok

    @property
    def breaking(self) -> tuple[Change, ...]:
        """Return the breaking changes."""
        return tuple(c for c in self.changes if c.breaking)

    @property
    def informational(self) -> tuple[Change, ...]:
        """Return the non-breaking changes."""
        return tuple(c for c in self.changes if not c.breaking)


def compare_paths(
    old: Iterable[str | PathLike[str]], new: Iterable[str | PathLike[str]]
) -> BreakingReport:
    """Load both sides (files or directories) and compare them (the ``breaking`` command).

    When a side has errors the report carries its diagnostics and no changes.
    """
    from .compiler import load_paths

    before = load_paths(old)
    after = load_paths(new)
    changes = compare(before.schema, after.schema) if before.ok and after.ok else []
    return BreakingReport(before, after, tuple(changes))

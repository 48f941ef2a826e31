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

The language's background declarations and access rules add their own kinds (this
toolkit's extension; the original has none for them):

- breaking: ``operation_access_tightened`` (``auth: none`` -> ``required``, roles added
  to a route that had none or fewer, a ``permission: check`` added or its action or
  resource changed), ``job_removed``, ``job_params_changed`` (queued messages carry the
  old arguments), ``saga_removed`` and ``saga_steps_changed`` (runs in flight resume by
  step position);
- informational: ``operation_access_relaxed``, ``job_added``, ``job_queue_changed``,
  ``job_retry_changed``, ``schedule_added``, ``schedule_removed``, ``schedule_changed``,
  ``saga_added``.

Named enums (``enum Status { a, b }``) have their own kinds, since a field typed with one
keeps its type name while the values change under it: breaking ``enum_removed``,
``enum_value_removed`` and ``enum_value_added`` (a client decoding the enum exhaustively
meets a value it does not know); informational ``enum_added`` and
``enum_values_reordered`` (the order is not on the wire). An inline ``enum(a, b)`` field
gaining a value is ``enum_value_added`` too; losing one is ``field_type_changed``.

A ``@renamed_from`` rename keeps the column's data, so ``field_renamed`` stays
informational for storage; but when the entity or message travels in an rpc's request
or response (directly or nested in a message), the JSON member clients read or send
changes name: that is the breaking ``field_renamed_in_api``, naming the rpcs.

Tighter validation (a smaller ``max_len``) is deliberately out of scope, as in the
original. Modules are matched by (version, name); declarations by name within a module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING

from .format import job_call_text, retry_text
from .nodes import Field, Job, Module, Param, Position, Rpc, Saga, Schedule, Schema, TypeRef

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
    "operation_access_tightened",
    "field_renamed_in_api",
    "job_removed",
    "job_params_changed",
    "saga_removed",
    "saga_steps_changed",
    "enum_removed",
    "enum_value_removed",
    "enum_value_added",
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
    "operation_access_relaxed",
    "job_added",
    "job_queue_changed",
    "job_retry_changed",
    "schedule_added",
    "schedule_removed",
    "schedule_changed",
    "saga_added",
    "enum_added",
    "enum_values_reordered",
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
    base = f"enum({', '.join(ref.enum_values)})" if ref.name == "enum" else ref.name
    return f"[{base}]" if ref.is_list else base


class _Diff:
    def __init__(self, api_types: dict[str, list[str]] | None = None) -> None:
        self.changes: list[Change] = []
        #: Entity or message name -> the rpcs whose JSON carries it (the new schema's).
        self.api_types = api_types or {}

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
        self.enums(old, new)
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
        self.background(old, new)

    def enums(self, old: Module, new: Module) -> None:
        """Compare named enums: every value change a client can observe breaks it.

        A removed value is refused from then on (and old rows hold it); an added one
        reaches clients that decode the enum exhaustively (generated clients, switch
        statements) as a value they do not know. Only the order is invisible on the wire.
        """
        old_enums = {e.name: e for e in old.enums}
        new_enums = {e.name: e for e in new.enums}
        for name, enum in old_enums.items():
            if name not in new_enums:
                self.add("enum_removed", f"enum {name} removed", enum.pos)
        for name, enum in new_enums.items():
            before = old_enums.get(name)
            if before is None:
                self.add("enum_added", f"enum {name} added", enum.pos)
                continue
            for value in before.values:
                if value not in enum.values:
                    self.add("enum_value_removed", f"enum {name}: value {value} removed", enum.pos)
            for value in enum.values:
                if value not in before.values:
                    self.add("enum_value_added", f"enum {name}: value {value} added", enum.pos)
            kept_before = [v for v in before.values if v in enum.values]
            kept_after = [v for v in enum.values if v in before.values]
            if kept_before != kept_after:
                self.add("enum_values_reordered", f"enum {name}: values reordered", enum.pos)

    def background(self, old: Module, new: Module) -> None:
        old_jobs = {j.name: j for j in old.jobs}
        new_jobs = {j.name: j for j in new.jobs}
        for name, job in old_jobs.items():
            if name not in new_jobs:
                self.add("job_removed", f"job {name} removed", job.pos)
        for name, job in new_jobs.items():
            if name not in old_jobs:
                self.add("job_added", f"job {name} added", job.pos)
            else:
                self.job(old_jobs[name], job)
        old_schedules = {x.name: x for x in old.schedules}
        new_schedules = {x.name: x for x in new.schedules}
        for name, sched in old_schedules.items():
            if name not in new_schedules:
                self.add("schedule_removed", f"schedule {name} removed", sched.pos)
        for name, sched in new_schedules.items():
            if name not in old_schedules:
                self.add("schedule_added", f"schedule {name} added", sched.pos)
            elif _schedule_shape(old_schedules[name]) != _schedule_shape(sched):
                was, now = _schedule_shape(old_schedules[name]), _schedule_shape(sched)
                self.add(
                    "schedule_changed",
                    f"schedule {name} changed from {was[0]} {was[1]} to {now[0]} {now[1]}",
                    sched.pos,
                )
        old_sagas = {x.name: x for x in old.sagas}
        new_sagas = {x.name: x for x in new.sagas}
        for name, saga in old_sagas.items():
            if name not in new_sagas:
                self.add("saga_removed", f"saga {name} removed", saga.pos)
        for name, saga in new_sagas.items():
            if name not in old_sagas:
                self.add("saga_added", f"saga {name} added", saga.pos)
            elif _saga_shape(old_sagas[name]) != _saga_shape(saga):
                before = ", ".join(s.name for s in old_sagas[name].steps)
                after = ", ".join(s.name for s in saga.steps)
                self.add(
                    "saga_steps_changed",
                    f"saga {name} steps changed from ({before}) to ({after})",
                    saga.pos,
                )

    def job(self, old: Job, new: Job) -> None:
        if _signature(old.params) != _signature(new.params):
            before = ", ".join(f"{p.name}: {_param_type(p)}" for p in old.params)
            after = ", ".join(f"{p.name}: {_param_type(p)}" for p in new.params)
            self.add(
                "job_params_changed",
                f"job {new.name} parameters changed from ({before}) to ({after})",
                new.pos,
            )
        if (old.queue or "default") != (new.queue or "default"):
            self.add(
                "job_queue_changed",
                f"job {new.name} moved from queue {old.queue or 'default'} to "
                f"{new.queue or 'default'} (drain the old queue before deploying)",
                new.pos,
            )
        before = retry_text(old.retry) if old.retry else "none"
        after = retry_text(new.retry) if new.retry else "none"
        if before != after:
            self.add(
                "job_retry_changed",
                f"job {new.name} retry changed from {before} to {after}",
                new.pos,
            )

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
                rpcs = self.api_types.get(owner)
                if rpcs:
                    self.add(
                        "field_renamed_in_api",
                        f"field {owner}.{name} renamed to {target.name} changes the JSON of "
                        f'{", ".join(rpcs)}: clients reading or sending "{name}" break (keep '
                        "the old name in the schema, or add a new versioned route)",
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
        elif old.type.name == "enum" and new.type.name == "enum":
            # An inline enum gaining a value breaks the same clients a named one does.
            for value in new.type.enum_values:
                if value not in old.type.enum_values:
                    self.add(
                        "enum_value_added", f"field {where}: enum value {value} added", new.pos
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
            for was, now in zip(old.params, new.params, strict=True):
                if was.validation is None and now.validation is not None:
                    self.add(
                        "validate_added",
                        f"parameter {now.name} of operation {label} gained @validate",
                        now.validation.pos,
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
        self.access(label, old, new)
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

    def access(self, label: str, old: Rpc, new: Rpc) -> None:
        """Report ``auth:`` / ``permission:`` changes: tightened breaks callers."""
        before, after = _access(old), _access(new)
        if before == after:
            return
        roles_before, roles_after = set(before[1]), set(after[1])
        tightened = (
            (after[0] and not before[0])
            or (bool(roles_after) and (not roles_before or not roles_after >= roles_before))
            or (after[2] is not None and after[2] != before[2])
        )
        kind = "operation_access_tightened" if tightened else "operation_access_relaxed"
        self.add(
            kind,
            f"operation {label} access changed from {_access_text(before)} to "
            f"{_access_text(after)}",
            new.pos,
        )


def _access(rpc: Rpc) -> tuple[bool, tuple[str, ...], tuple[str, str | None] | None]:
    """Return (authentication required, roles, (action, resource) of a check)."""
    required = bool(rpc.auth is not None and rpc.auth.required)
    roles = tuple(sorted(rpc.auth.roles)) if rpc.auth is not None else ()
    perm = rpc.permission
    check = (perm.action or "", perm.resource) if perm is not None and perm.check else None
    if check is not None:
        required = True  # a permission check needs a verified caller
    return required, roles, check


def _access_text(access: tuple[bool, tuple[str, ...], tuple[str, str | None] | None]) -> str:
    required, roles, check = access
    text = "auth required" if required else "public"
    if roles:
        text += f" (roles: {', '.join(roles)})"
    if check is not None:
        text += f', check("{check[0]}"' + (f", resource: {check[1]})" if check[1] else ")")
    return text


def _schedule_shape(s: Schedule) -> tuple[str, str]:
    return (f'"{s.cron}"' if s.cron else "", job_call_text(s.dispatch) if s.dispatch else "")


def _saga_shape(s: Saga) -> tuple[tuple[str, str, str, bool], ...]:
    return tuple(
        (st.name, str(st.execute or ""), str(st.compensate or ""), st.pivot) for st in s.steps
    )


def _type_changed(old: TypeRef, new: TypeRef) -> bool:
    if old.name != new.name or old.is_list != new.is_list:
        return True
    # Losing an inline enum value changes the type (old rows hold it); gaining one is
    # ``enum_value_added``, reported by ``field``.
    return bool(set(old.enum_values) - set(new.enum_values))


def _param_type(p: Param) -> str:
    return _type(p.type) + ("?" if p.type.optional else "")


def _signature(params: Sequence[Param]) -> tuple[tuple[str, str, tuple[str, ...], bool], ...]:
    return tuple((p.name, p.type.name, p.type.enum_values, p.type.optional) for p in params)


def compare(old: Schema, new: Schema) -> list[Change]:
    """Return every change from ``old`` to ``new``, in a stable order."""
    diff = _Diff(_api_types(new))
    diff.schemas(old, new)
    return diff.changes


def _api_types(schema: Schema) -> dict[str, list[str]]:
    """Return entity/message name -> the rpcs (``Service.Rpc``) whose JSON carries it.

    A type travels in an rpc's response (its return type) or request (a parameter's
    type), and so does every message or entity a carried message's fields name.
    """
    members: dict[str, set[str]] = {}
    for module in schema.modules:
        for message in module.messages:
            members.setdefault(message.name, set()).update(f.type.name for f in message.fields)
    carried: dict[str, set[str]] = {}
    for module in schema.modules:
        for service in module.services:
            for rpc in service.rpcs:
                label = f"{service.name}.{rpc.name}"
                todo = [rpc.returns.name, *(p.type.name for p in rpc.params)]
                seen: set[str] = set()
                while todo:
                    name = todo.pop()
                    if name in seen:
                        continue
                    seen.add(name)
                    carried.setdefault(name, set()).add(label)
                    todo.extend(members.get(name, ()))
    return {name: sorted(labels) for name, labels in carried.items()}


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

"""Mermaid flowcharts of a schema: one ``graph TD`` per module, then the modules' ``graph LR``.

Each module's diagram has a node per entity and an edge per declared relation, labelled
with its kind (``User -->|has_many| Order``), then its background work: a stadium node
per ``job`` (with its queue), a hexagon per ``schedule`` (with its cron) and a
``dispatch`` edge to the job it fires, and a node per ``saga`` with one numbered edge per
step to the rpc it executes (``saga_PlaceOrder -->|"1 reserve"| ...``; the pivot step is
marked, a compensation is drawn dotted). The last diagram links modules whose rpcs return
or take a type declared in another module (``root -->|rpc| billing``) and modules whose
sagas call another module's rpcs (``root -->|saga| billing``). Each diagram
is a fenced ``mermaid`` block, so the output pastes into Markdown (GitHub, GitLab and
``mmdc`` render the fences); the order is the schema's, so the text is stable.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit_codegen.nodes import Module, Schema

__all__ = ["module_edges", "module_name", "render", "saga_edges"]

#: Words that end or restructure a Mermaid flowchart when used as a bare node id.
_RESERVED = {
    "end",
    "graph",
    "subgraph",
    "flowchart",
    "style",
    "class",
    "classdef",
    "click",
    "linkstyle",
    "direction",
    "default",
}
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def _node_id(name: str) -> str:
    ident = _UNSAFE.sub("_", name) or "_"
    return f"{ident}_" if ident.lower() in _RESERVED else ident


def _label(text: str) -> str:
    return text.replace('"', "#quot;")


def module_name(module: Module) -> str:
    """Return the module's name in the diagrams: ``root``, ``billing``, ``v1/iam``."""
    name = module.name or "root"
    return f"{module.version}/{name}" if module.version else name


def _module_diagram(module: Module) -> list[str]:
    lines = ["```mermaid", "graph TD", f"  %% module: {module_name(module)}"]
    for entity in module.entities:
        lines.append(f'  {_node_id(entity.name)}["{_label(entity.name)}"]')
    for entity in module.entities:
        for relation in entity.relations:
            lines.append(
                f"  {_node_id(entity.name)} -->|{relation.kind}| {_node_id(relation.target)}"
            )
    lines += _background(module)
    lines.append("```")
    return lines


def _background(module: Module) -> list[str]:
    """Return the nodes and edges of the module's jobs, schedules and sagas."""
    lines: list[str] = []
    for job in module.jobs:
        label = f"job {job.name}<br/>queue: {job.queue or 'default'}"
        lines.append(f'  {_node_id("job_" + job.name)}(["{_label(label)}"])')
    for sched in module.schedules:
        label = f"schedule {sched.name}<br/>{sched.cron or ''}"
        lines.append(f'  {_node_id("schedule_" + sched.name)}{{{{"{_label(label)}"}}}}')
        if sched.dispatch is not None:
            lines.append(
                f"  {_node_id('schedule_' + sched.name)} -->|dispatch| "
                f"{_node_id('job_' + sched.dispatch.job)}"
            )
    declared: set[str] = set()

    def rpc_node(ref: object) -> str:
        node = _node_id(f"rpc_{ref.service}_{ref.rpc}")  # type: ignore[attr-defined]
        if node not in declared:
            declared.add(node)
            lines.append(f'  {node}["{_label(str(ref))}"]')
        return node

    for saga in module.sagas:
        saga_id = _node_id("saga_" + saga.name)
        lines.append(f'  {saga_id}[/"saga {_label(saga.name)}"/]')
        for number, step in enumerate(saga.steps, 1):
            pivot = " (pivot)" if step.pivot else ""
            if step.execute is not None:
                target = rpc_node(step.execute)
                lines.append(f'  {saga_id} -->|"{number} {_label(step.name)}{pivot}"| {target}')
            if step.compensate is not None:
                undo = rpc_node(step.compensate)
                lines.append(f'  {saga_id} -.->|"undo {_label(step.name)}"| {undo}')
    return lines


def module_edges(schema: Schema) -> list[tuple[str, str]]:
    """Return sorted ``(from, to)`` module pairs where an rpc uses another module's type."""
    owner: dict[str, str] = {}
    for module in schema.modules:
        for group in (module.entities, module.messages, module.enums):
            for decl in group:
                owner.setdefault(decl.name, module_name(module))
    edges: set[tuple[str, str]] = set()
    for module in schema.modules:
        here = module_name(module)
        for service in module.services:
            for rpc in service.rpcs:
                for ref in (rpc.returns, *(p.type for p in rpc.params)):
                    there = owner.get(ref.name)
                    if there is not None and there != here:
                        edges.add((here, there))
    return sorted(edges)


def saga_edges(schema: Schema) -> list[tuple[str, str]]:
    """Return sorted ``(from, to)`` module pairs where a saga step calls another module's rpc."""
    owner = {s.name: module_name(m) for m in schema.modules for s in m.services}
    edges: set[tuple[str, str]] = set()
    for module in schema.modules:
        here = module_name(module)
        for saga in module.sagas:
            for step in saga.steps:
                for ref in (step.execute, step.compensate):
                    there = owner.get(ref.service) if ref is not None else None
                    if there is not None and there != here:
                        edges.add((here, there))
    return sorted(edges)


def render(schema: Schema) -> str:
    """Return the Mermaid text of ``schema`` (blocks separated by a blank line)."""
    blocks = [_module_diagram(module) for module in schema.modules]
    overview = ["```mermaid", "graph LR", "  %% modules"]
    for module in schema.modules:
        name = module_name(module)
        overview.append(f'  {_node_id(name)}["{_label(name)}"]')
    for here, there in module_edges(schema):
        overview.append(f"  {_node_id(here)} -->|rpc| {_node_id(there)}")
    for here, there in saga_edges(schema):
        overview.append(f"  {_node_id(here)} -->|saga| {_node_id(there)}")
    overview.append("```")
    blocks.append(overview)
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"

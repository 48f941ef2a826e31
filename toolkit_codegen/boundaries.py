"""Module boundaries: which references may cross from one schema module to another.

Names are global across a compile (an entity declared in ``billing`` can be named from
the root module), but a module is meant to be extractable into a service of its own
(``toolkit extract``), so the original toolkit's ``check-boundaries`` reports the
references that tie modules together (reference facts, section 1.1):

- a **relation** whose target entity lives in another module (a foreign key across
  modules: the tables could no longer live in separate databases);
- an **rpc return type** (entity or message) declared in another module;
- a **permission resource** (``permission: check(..., resource: E)``) in another module.

Allowed on purpose: named enums (resolved globally), **saga steps** naming rpcs of other
modules (a saga is how modules cooperate), and schedules dispatching jobs (jobs are
global, like entities). Modules are keyed by (version, name), so ``v1/iam`` and
``v2/iam`` are different modules.
"""

from __future__ import annotations

from .grammar import sort_diagnostics
from .nodes import Diagnostic, Module, Schema

__all__ = ["PHASE", "check_boundaries"]

#: The phase of every boundary diagnostic.
PHASE = "boundaries"


def _label(module: Module) -> str:
    name = module.name or "(root)"
    return f"{module.version}/{name}" if module.version else name


def check_boundaries(schema: Schema) -> list[Diagnostic]:
    """Return one error per cross-module relation, rpc return type and permission resource."""
    home: dict[str, Module] = {}
    for module in schema.modules:
        for group in (module.entities, module.messages):
            for decl in group:
                home.setdefault(decl.name, module)
    out: list[Diagnostic] = []

    def crossing(module: Module, name: str) -> Module | None:
        other = home.get(name)
        if other is None or (other.version, other.name) == (module.version, module.name):
            return None
        return other

    for module in schema.modules:
        here = _label(module)
        for entity in module.entities:
            for rel in entity.relations:
                other = crossing(module, rel.target)
                if other is not None:
                    out.append(
                        Diagnostic(
                            rel.pos,
                            PHASE,
                            f"relation {entity.name}.{rel.name} crosses from module {here} to "
                            f"{rel.target} in module {_label(other)}; reference it by id "
                            "(a plain column) or move the entities into one module",
                        )
                    )
        for service in module.services:
            for rpc in service.rpcs:
                other = crossing(module, rpc.returns.name)
                if other is not None:
                    out.append(
                        Diagnostic(
                            rpc.returns.pos,
                            PHASE,
                            f"rpc {service.name}.{rpc.name} in module {here} returns "
                            f"{rpc.returns.name} from module {_label(other)}; return a "
                            "message declared in this module",
                        )
                    )
                perm = rpc.permission
                if perm is None or perm.resource is None:
                    continue
                other = crossing(module, perm.resource)
                if other is not None:
                    out.append(
                        Diagnostic(
                            perm.resource_pos or perm.pos,
                            PHASE,
                            f"permission of rpc {service.name}.{rpc.name} in module {here} "
                            f"checks resource {perm.resource} from module {_label(other)}; "
                            "guard a resource of this module",
                        )
                    )
    return sort_diagnostics(out)

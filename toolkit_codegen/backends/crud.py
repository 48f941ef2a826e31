"""Which rpcs are plain CRUD (the rule), and the schema text of a CRUD service.

An rpc is *plain CRUD* of entity ``E`` (docs/compiler.md, "CRUD rpcs") when it returns
``E`` (not optional), has an ``http:`` binding, and its shape is one of:

==========  ====================  ===========  =============================================
kind        method                paginated    parameters
==========  ====================  ===========  =============================================
``get``     ``GET``               no           exactly the key: one parameter named and typed
                                               like ``E``'s single ``@primary`` field
``delete``  ``DELETE``            no           exactly the key
``list``    ``GET``               yes          none
``create``  ``POST``              no           fields of ``E`` (same name and type; not the
                                               key), covering every required field without
                                               a default
``update``  ``PUT`` or ``PATCH``  no           the key, then at least one non-key field of
                                               ``E`` (same name and type)
==========  ====================  ===========  =============================================

"Same type" means the same type name, and a parameter may be optional only where the
field is optional or has a default (create) or always (update: absent means unchanged
for PATCH). Such an rpc gets a default implementation on the ORM
(``toolkit_batteries.api_runtime.crud``) that the user's ``handlers.py`` may replace; no
stub is written for it. :func:`crud_service_text` writes the five for one entity
(``toolkit generate entity --crud``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..nodes import Entity, Field, Param, Rpc, Schema, snake_case
from . import entity_named
from ._django_common import RpcRef, http_rpcs

__all__ = ["CrudRpc", "crud_of", "crud_service_text", "list_order", "listed_orders"]


@dataclass(frozen=True, slots=True)
class CrudRpc:
    """A plain CRUD rpc: its kind (``get``/``list``/``create``/``update``/``delete``)."""

    kind: str
    entity: Entity
    #: The key parameter's name (get, update, delete), else None.
    lookup: str | None = None


def _same_type(param: Param, field: Field) -> bool:
    return (param.type.name, param.type.enum_values, param.type.is_list) == (
        field.type.name,
        field.type.enum_values,
        field.type.is_list,
    )


def crud_of(schema: Schema, ref: RpcRef) -> CrudRpc | None:
    """Return what plain CRUD ``ref`` is, or None when it is anything else."""
    rpc = ref.rpc
    entity = entity_named(schema, rpc.returns.name)
    if rpc.http is None or entity is None or rpc.returns.optional:
        return None
    method = ref.method
    primary = entity.primary_fields
    key = primary[0] if len(primary) == 1 else None
    params = list(rpc.params)
    if method == "GET" and rpc.paginated:
        return CrudRpc("list", entity) if not params else None
    if rpc.paginated:
        return None
    if method in ("GET", "DELETE"):
        if key is not None and len(params) == 1 and _is_key(params[0], key):
            return CrudRpc("get" if method == "GET" else "delete", entity, key.name)
        return None
    if method == "POST":
        return CrudRpc("create", entity) if _is_create(schema, entity, params) else None
    if method in ("PUT", "PATCH"):
        if key is None or len(params) < 2 or not _is_key(params[0], key):
            return None
        if all(_is_field(schema, entity, p, key) for p in params[1:]):
            return CrudRpc("update", entity, key.name)
    return None


def _is_key(param: Param, key: Field) -> bool:
    return param.name == key.name and _same_type(param, key) and not param.type.optional


def _is_field(schema: Schema, entity: Entity, param: Param, key: Field | None) -> bool:
    if entity.field(param.name) is None and param.type.is_list:
        from ._relations import m2m_id_type

        ids = m2m_id_type(schema, entity, param.name)  # a many_to_many, set by its ids
        return ids is not None and ids.name == param.type.name
    field = entity.field(param.name)
    return field is not None and field is not key and not field.primary and _same_type(param, field)


def _is_create(schema: Schema, entity: Entity, params: list[Param]) -> bool:
    named = {p.name: p for p in params}
    if len(named) != len(params) or not all(_is_field(schema, entity, p, None) for p in params):
        return False
    for field in entity.fields:
        has_default = field.default is not None or field.optional
        param = named.get(field.name)
        if field.primary:
            if field.type.name not in ("uuid", "int32", "int64"):  # no generated key
                return False
            continue
        if param is None and not has_default:
            return False
        if param is not None and param.type.optional and not has_default:
            return False
    return True


def list_order(entity: Entity) -> tuple[str, ...] | None:
    """Return the keyset order of a CRUD list: ``created_at`` (if any), then the key.

    ``created_at`` counts when it is a required ``timestamp``; the single primary key
    ends the order, so it is total. An entity without one single primary key has no
    default list (None).
    """
    primary = entity.primary_fields
    if len(primary) != 1:
        return None
    created = entity.field("created_at")
    if created is not None and created.type.name == "timestamp" and not created.optional:
        return ("created_at", primary[0].name)
    return (primary[0].name,)


def listed_orders(schema: Schema) -> dict[str, tuple[str, ...]]:
    """Return, per entity with a generated CRUD list, the list's order when it needs an index.

    Why: the list pages by keyset on ``(created_at, <key>)``; without an index on that
    order every page scans and sorts the table (issue 27). An order of the key alone is
    the primary key's index already, so only longer orders are returned.
    """
    found: dict[str, tuple[str, ...]] = {}
    for ref in http_rpcs(schema):
        crud = crud_of(schema, ref)
        order = list_order(crud.entity) if crud is not None and crud.kind == "list" else None
        if order is not None and len(order) > 1:
            found.setdefault(crud.entity.name, order)  # type: ignore[union-attr]
    return found


def crud_service_text(entity: Entity, path_prefix: str = "/v1") -> str:
    """Return ``service <Entity>Service`` with the five CRUD rpcs and their routes.

    Create and update take every non-key field (update by ``PATCH``, so a client sends
    what changes); every rpc is ``auth: required``: a project opens one up by editing it.
    """
    name = entity.name
    key = entity.primary_fields[0]
    plural = entity.table_name.replace("_", "-")
    base = f"{path_prefix}/{plural}"
    fields = [f for f in entity.fields if not f.primary]
    create = [f for f in fields if f.default is None or f.default.kind != "now"]

    def param(f: Field, optional: bool) -> str:
        typ = f.type.name
        if f.type.enum_values:
            typ = f"enum({', '.join(f.type.enum_values)})"
        text = f"{f.name}: {typ}{'?' if optional or f.optional else ''}"
        rules = _validate_text(f)
        return f"{text} {rules}" if rules else text

    created = ", ".join(param(f, f.default is not None) for f in create)
    changed = ", ".join(param(f, True) for f in create)
    key_param = f"{key.name}: {key.type.name}"
    snake = snake_case(name)
    lines = [
        f"service {name}Service {{",
        f"  rpc Create{name}({created}) -> {name} {{",
        f'    http: POST "{base}"',
        "    auth: required",
        "  }",
        "",
        f"  rpc Get{name}({key_param}) -> {name} {{",
        f'    http: GET "{base}/{{{key.name}}}"',
        "    auth: required",
        f'    errors: {{ not_found("no such {snake.replace("_", " ")}") }}',
        "  }",
        "",
        f"  rpc List{name}s() -> {name} {{",
        f'    http: GET "{base}"',
        "    auth: required",
        "    paginated: true",
        "  }",
        "",
        f"  rpc Update{name}({key_param}{', ' + changed if changed else ''}) -> {name} {{",
        f'    http: PATCH "{base}/{{{key.name}}}"',
        "    auth: required",
        f'    errors: {{ not_found("no such {snake.replace("_", " ")}") }}',
        "  }",
        "",
        f"  rpc Delete{name}({key_param}) -> {name} {{",
        f'    http: DELETE "{base}/{{{key.name}}}"',
        "    auth: required",
        f'    errors: {{ not_found("no such {snake.replace("_", " ")}") }}',
        "  }",
        "}",
    ]
    if not changed:  # an entity with nothing to change has no update rpc
        start = lines.index(f"  rpc Update{name}({key_param}) -> {name} {{")
        del lines[start : start + 6]
    return "\n".join(lines) + "\n"


def _validate_text(f: Field) -> str:
    rules = f.validation
    if rules is None:
        return ""
    parts = []
    for attr in ("min_len", "max_len", "gte", "lte", "gt", "lt"):
        value = getattr(rules, attr, None)
        if value is not None:
            parts.append(f"{attr}: {value}")
    if getattr(rules, "format", None):
        parts.append(f'format: "{rules.format}"')
    return f"@validate({', '.join(parts)})" if parts else ""


def is_crud(schema: Schema, ref: RpcRef) -> bool:
    """Return whether ``ref`` gets a default implementation (and no handler stub)."""
    found = crud_of(schema, ref)
    return found is not None and (found.kind != "list" or list_order(found.entity) is not None)


def rpc_is_crud(schema: Schema, module: object, service: object, rpc: Rpc) -> bool:
    """Return :func:`is_crud` for an rpc given by its parts."""
    return is_crud(schema, RpcRef(module, service, rpc))  # type: ignore[arg-type]

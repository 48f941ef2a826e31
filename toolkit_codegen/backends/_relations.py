"""Relations as the API shows them: a ``many_to_many`` is a list of the target's ids.

A ``belongs_to`` needs nothing here: its declared foreign-key column (``team_id``) is an
entity field, so it already travels as ``<name>_id``. A ``many_to_many tags: Tag`` is
no column; requests and responses carry it as ``tags: [<Tag's key type>]``: the
serializers write it (read from the relation's manager), the OpenAPI document shows
it, and the CRUD rule accepts a ``tags: [uuid]`` parameter as a settable member of the
entity (the runtime checks that every id exists, then sets the relation).

An id in a request must also name a row the caller may read: :func:`read_checks` gives,
per entity, the ``permission: check(...)`` of its ``GET``-by-id rpc, which the CRUD
defaults ask on every row a foreign key or an id list names (so another owner's row is
the same 400 as an id that names none).
"""

from __future__ import annotations

from ..nodes import Entity, Permission, Schema, TypeRef
from . import entity_named, per_schema

__all__ = ["m2m_id_lists", "m2m_id_type", "read_check", "read_checks"]


def m2m_id_type(schema: Schema, entity: Entity, name: str) -> TypeRef | None:
    """Return ``[key type]`` of entity's ``many_to_many`` ``name``, or None."""
    for rel in entity.relations:
        if rel.kind != "many_to_many" or rel.name != name:
            continue
        target = entity_named(schema, rel.target)
        keys = target.primary_fields if target is not None else ()
        if len(keys) != 1:
            return None
        return TypeRef(keys[0].type.name, rel.pos, is_list=True)
    return None


def m2m_id_lists(schema: Schema, entity: Entity) -> list[tuple[str, TypeRef]]:
    """Return ``(relation name, [key type])`` for each many_to_many of ``entity``."""
    found = []
    for rel in entity.relations:
        if rel.kind == "many_to_many":
            typ = m2m_id_type(schema, entity, rel.name)
            if typ is not None:
                found.append((rel.name, typ))
    return found


def read_check(schema: Schema, entity: str) -> Permission | None:
    """Return the ``permission: check`` of the ``GET`` rpc reading one ``entity`` object.

    That rpc is the first ``GET`` whose path has a parameter and whose check names
    ``resource: entity``; None when no rpc checks reading that entity (any row is readable).
    """
    return _read_checks_by_entity(schema).get(entity)


@per_schema
def _read_checks_by_entity(schema: Schema) -> dict[str, Permission]:
    """Return ``{entity: read check}`` in one pass (a scan of every rpc per entity was slow)."""
    found: dict[str, Permission] = {}
    for service in schema.services:
        for rpc in service.rpcs:
            permission = rpc.permission
            if (
                rpc.http is not None
                and rpc.http.method.upper() == "GET"
                and permission is not None
                and permission.check
                and permission.resource is not None
                and "{" in rpc.http.path
            ):
                found.setdefault(permission.resource, permission)
    return found


def read_checks(schema: Schema) -> list[tuple[str, Permission]]:
    """Return ``(entity name, read check)`` for every entity whose reading is checked."""
    found = []
    for entity in schema.entities:
        permission = read_check(schema, entity.name)
        if permission is not None and permission.action:
            found.append((entity.name, permission))
    return found

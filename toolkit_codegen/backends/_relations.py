"""Relations as the API shows them: a ``many_to_many`` is a list of the target's ids.

A ``belongs_to`` needs nothing here: its declared foreign-key column (``team_id``) is an
entity field, so it already travels as ``<name>_id``. A ``many_to_many tags: Tag`` is
no column; requests and responses carry it as ``tags: [<Tag's key type>]``: the
serializers write it (read from the relation's manager), the OpenAPI document shows
it, and the CRUD rule accepts a ``tags: [uuid]`` parameter as a settable member of the
entity (the runtime checks that every id exists, then sets the relation).
"""

from __future__ import annotations

from ..nodes import Entity, Schema, TypeRef

__all__ = ["m2m_id_lists", "m2m_id_type"]


def m2m_id_type(schema: Schema, entity: Entity, name: str) -> TypeRef | None:
    """Return ``[key type]`` of entity's ``many_to_many`` ``name``, or None."""
    for rel in entity.relations:
        if rel.kind != "many_to_many" or rel.name != name:
            continue
        target = schema.entity(rel.target)
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

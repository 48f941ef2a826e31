"""The JSON Schema the generated MCP server checks a tool call's arguments against.

The tool's listed ``inputSchema`` describes shapes for tool selection; this one is what the
HTTP side enforces for the same rpc: the declared types (a ``string`` is not an object),
the ``@validate`` bounds of every parameter and nested field, which arguments are
required, and no unknown ones. ``server.py`` validates each ``tools/call`` against it
before any handler runs.
"""

from __future__ import annotations

from ..nodes import Entity, Enum, Field, Param, Rpc, TypeRef, Validation
from ._jsonschema import JSON, MCP_SCALARS, DeclIndex

__all__ = ["validation_schema"]

_DEFINITIONS = "#/definitions/"
#: Integer scalars are bounded as the database columns behind them are.
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _bounds(schema: JSON, rules: Validation | None) -> JSON:
    """Overlay ``@validate`` rules (draft 7 keywords) on a scalar schema."""
    if rules is None:
        return schema
    if rules.min_len is not None:
        schema["minLength"] = rules.min_len
    if rules.max_len is not None:
        schema["maxLength"] = rules.max_len
    if rules.gte is not None:
        schema["minimum"] = rules.gte
    if rules.gt is not None:
        schema["exclusiveMinimum"] = rules.gt
    if rules.lte is not None:
        schema["maximum"] = rules.lte
    if rules.lt is not None:
        schema["exclusiveMaximum"] = rules.lt
    if rules.format is not None:
        schema["format"] = {"url": "uri"}.get(rules.format, rules.format)
    return schema


def _type_schema(index: DeclIndex, typ: TypeRef, rules: Validation | None) -> JSON:
    if getattr(typ, "is_list", False):
        items = _type_schema(index, typ.element, rules)
        schema: JSON = {"type": "array", "items": items}
    elif typ.is_inline_enum:
        schema = {"type": "string", "enum": list(typ.enum_values)}
    elif typ.is_scalar:
        schema = _bounds(dict(MCP_SCALARS[typ.name]), rules)
        if typ.name in _INT_RANGES:
            low, high = _INT_RANGES[typ.name]
            schema.setdefault("minimum", low)
            schema.setdefault("maximum", high)
    else:
        decl = index.get(typ.name)
        key = f"{decl.module.label if decl else 'default'}_{typ.name}"
        schema = {"$ref": _DEFINITIONS + key}
    if typ.optional:
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


def _object(index: DeclIndex, members: list[Field] | list[Param], required: list[str]) -> JSON:
    schema: JSON = {
        "type": "object",
        "properties": {m.name: _type_schema(index, m.type, m.validation) for m in members},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _definition(index: DeclIndex, name: str) -> JSON:
    decl = index.get(name)
    assert decl is not None
    node = decl.node
    if isinstance(node, Enum):
        return {"type": "string", "enum": list(node.values)}
    fields = list(node.fields)
    if isinstance(node, Entity):
        required = [f.name for f in fields if f.primary and not f.optional]
    else:
        required = [f.name for f in fields if not f.optional and f.default is None]
    return _object(index, fields, required)


def validation_schema(index: DeclIndex, rpc: Rpc) -> JSON:
    """Return the draft 7 schema of an rpc's tool arguments, with every definition it uses."""
    params = list(rpc.params)
    schema = _object(index, params, [p.name for p in params if not p.type.optional])
    if rpc.paginated:
        schema["properties"]["cursor"] = {"type": ["string", "null"]}
        schema["properties"]["limit"] = {"type": "integer", "minimum": 1, "maximum": 200}
    names = [p.type for p in params]
    reached = index.closure(
        [t.name for t in _leaf_types(names) if not t.is_scalar and not t.is_inline_enum]
    )
    if reached:
        schema["definitions"] = {
            f"{index.get(n).module.label}_{n}": _definition(index, n)  # type: ignore[union-attr]
            for n in reached
        }
    return schema


def _leaf_types(types: list[TypeRef]) -> list[TypeRef]:
    """Return the element types of lists and the types themselves otherwise."""
    out = []
    for typ in types:
        while getattr(typ, "is_list", False):
            typ = typ.element
        out.append(typ)
    return out

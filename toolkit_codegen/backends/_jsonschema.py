"""What the ``openapi`` and ``mcp`` backends share: who declares a type, and its JSON shape.

Both backends describe the schema's entities, messages and named enums as JSON Schema
objects and point at them with ``$ref``. They differ only in detail: OpenAPI carries
formats, validation bounds and ``nullable``, while the MCP manifest keeps bare shapes for
tool selection. Keeping the two mappings side by side keeps them from drifting apart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

from ..nodes import Entity, Enum, Field, Message, Module, Rpc, Schema, TypeRef, Validation

__all__ = [
    "JSON",
    "MCP_SCALARS",
    "OPENAPI_SCALARS",
    "Decl",
    "DeclIndex",
    "RefFn",
    "entity_required",
    "mcp_type_schema",
    "module_dir",
    "object_schema",
    "openapi_type_schema",
    "owner_name",
    "referenced_names",
    "render_json",
    "rpc_type_names",
]

JSON = dict[str, Any]
#: Turns a declared type's name into the ``$ref`` string of the document being built.
RefFn = Callable[[str], str]

#: Scalar -> OpenAPI 3.0 schema (type and format).
OPENAPI_SCALARS: dict[str, JSON] = {
    "uuid": {"type": "string", "format": "uuid"},
    "string": {"type": "string"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "float32": {"type": "number", "format": "float"},
    "float64": {"type": "number", "format": "double"},
    "bool": {"type": "boolean"},
    "timestamp": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "bytes": {"type": "string", "format": "byte"},
    # Any JSON value but null (``json?`` adds null): what the server's JSONField takes.
    "json": {
        "anyOf": [
            {"type": "object"},
            {"type": "array", "items": {}},
            {"type": "string"},
            {"type": "number"},
            {"type": "boolean"},
        ]
    },
}

#: Scalar -> plain JSON Schema for MCP tools (no formats; ``json`` is unconstrained).
MCP_SCALARS: dict[str, JSON] = {
    "uuid": {"type": "string"},
    "string": {"type": "string"},
    "int32": {"type": "integer"},
    "int64": {"type": "integer"},
    "float32": {"type": "number"},
    "float64": {"type": "number"},
    "bool": {"type": "boolean"},
    "timestamp": {"type": "string"},
    "date": {"type": "string"},
    "bytes": {"type": "string"},
    "json": {},
}

#: Every ``string`` refuses NUL (PostgreSQL text cannot hold it; DRF refuses it too): the
#: document says so with this pattern (the same text in ECMA and Python regex syntax).
NO_NUL_PATTERN = "^[^\\u0000]*$"
#: A page cursor as the server hands it out: empty (the first page) or the handler's
#: position, ``.``, and a 43-character URL-safe base64 HMAC (any other value is a 400;
#: a well-formed one the server did not sign is a 400 too, which no pattern can say).
CURSOR_SCHEMA: JSON = {"type": "string", "pattern": "^$|^[\\s\\S]*\\.[A-Za-z0-9_-]{43}$"}

#: ``@validate(format: ...)`` -> OpenAPI ``format``.
_FORMATS = {"email": "email", "url": "uri", "uuid": "uuid"}


@dataclass(frozen=True, slots=True)
class Decl:
    """A named type and the module that declares it."""

    module: Module
    node: Entity | Message | Enum

    @property
    def kind(self) -> str:
        """Return ``entity``, ``message`` or ``enum``."""
        if isinstance(self.node, Entity):
            return "entity"
        if isinstance(self.node, Message):
            return "message"
        return "enum"


class DeclIndex:
    """Every entity, message and named enum of a schema by name (names are global)."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self._decls: dict[str, Decl] = {}
        for module in schema.modules:
            for group in (module.entities, module.messages, module.enums):
                for node in group:
                    # Validation rejects duplicates; if one slipped through, the first wins.
                    self._decls.setdefault(node.name, Decl(module, node))

    def get(self, name: str) -> Decl | None:
        """Return the declaration of ``name``, or None for a scalar or unknown name."""
        return self._decls.get(name)

    def of_module(self, module: Module) -> Iterator[Decl]:
        """Yield the module's own entities, messages and enums in declaration order."""
        for group in (module.entities, module.messages, module.enums):
            for node in group:
                decl = self._decls.get(node.name)
                if decl is not None and decl.module is module:
                    yield decl

    def closure(self, names: Iterable[str]) -> list[str]:
        """Return ``names`` plus every type they reach through fields, first-seen order."""
        seen: dict[str, None] = {}
        stack = [n for n in names if n in self._decls]
        stack.reverse()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen[name] = None
            node = self._decls[name].node
            if isinstance(node, Enum):
                continue
            refs = [r for f in node.fields if (r := _ref_name(f.type)) and r in self._decls]
            stack.extend(reversed(refs))
        return list(seen)


def module_dir(module: Module) -> str:
    """Return the directory of a module's own files: ``default``, ``billing``, ``v1/iam``."""
    return f"{module.version}/{module.label}" if module.version else module.label


def owner_name(module: Module, *names: str) -> str:
    """Return ``default.UserService.GetUser`` (``v1.iam.X`` for a versioned module)."""
    return ".".join([*module_dir(module).split("/"), *names])


def rpc_type_names(rpc: Rpc) -> list[str]:
    """Return the declared types an rpc's parameters and return type name, in order."""
    names = [n for p in rpc.params for n in referenced_names(p.type)]
    names.extend(referenced_names(rpc.returns))
    return names


def _ref_name(typ: TypeRef) -> str | None:
    """Return the declared type a TypeRef points at, or None for scalars and inline enums."""
    if typ.is_scalar or typ.is_inline_enum:
        return None
    return typ.name


def referenced_names(typ: TypeRef) -> tuple[str, ...]:
    """Return the declared type ``typ`` names (at most one)."""
    name = _ref_name(typ)
    return (name,) if name else ()


def _overlay(schema: JSON, rules: Validation) -> None:
    if rules.format is not None:
        schema["format"] = _FORMATS.get(rules.format, rules.format)
    if rules.min_len is not None:
        schema["minLength"] = rules.min_len
    if rules.max_len is not None:
        schema["maxLength"] = rules.max_len
    if rules.gte is not None:
        schema["minimum"] = rules.gte
    if rules.gt is not None:
        schema["minimum"] = rules.gt
        schema["exclusiveMinimum"] = True
    if rules.lte is not None:
        schema["maximum"] = rules.lte
    if rules.lt is not None:
        schema["maximum"] = rules.lt
        schema["exclusiveMaximum"] = True


def openapi_type_schema(typ: TypeRef, rules: Validation | None, ref: RefFn) -> JSON:
    """Return the OpenAPI 3.0 schema of a field or parameter type.

    Formats and ``@validate`` bounds are overlaid; an optional type is ``nullable``. A
    ``$ref`` cannot carry siblings in OpenAPI 3.0, so an optional reference is wrapped in
    ``allOf`` to say that it may be null. A list ``[T]`` is ``type: array`` whose ``items``
    carry ``T``'s schema and the ``@validate`` rules (they apply to each element).
    """
    if typ.is_list:
        items = openapi_type_schema(typ.element, rules, ref)
        schema_list: JSON = {"type": "array", "items": items}
        if typ.optional:
            schema_list["nullable"] = True
        return schema_list
    if typ.is_inline_enum:
        schema: JSON = {"type": "string", "enum": list(typ.enum_values)}
    elif typ.is_scalar:
        schema = dict(OPENAPI_SCALARS[typ.name])
        if rules is not None:
            _overlay(schema, rules)
        if typ.name == "string" and (rules is None or rules.format != "uuid"):
            schema["pattern"] = NO_NUL_PATTERN
        if typ.name == "json" and typ.optional:
            schema = {}  # any JSON value, null included
    else:
        schema = {"$ref": ref(typ.name)}
        if typ.optional:
            return {"allOf": [schema], "nullable": True}
        return schema
    if typ.optional:
        schema["nullable"] = True
    return schema


def mcp_type_schema(typ: TypeRef, ref: RefFn) -> JSON:
    """Return the plain JSON Schema of a type for MCP tools (no bounds, no formats)."""
    if typ.is_list:
        return {"type": "array", "items": mcp_type_schema(typ.element, ref)}
    if typ.is_inline_enum:
        return {"type": "string", "enum": list(typ.enum_values)}
    if typ.is_scalar:
        return dict(MCP_SCALARS[typ.name])
    return {"$ref": ref(typ.name)}


def object_schema(
    fields: Iterable[Field], prop: Callable[[Field], JSON], required: Iterable[str] = ()
) -> JSON:
    """Return ``{type: object, properties, required?}`` with one property per field."""
    schema: JSON = {"type": "object", "properties": {f.name: prop(f) for f in fields}}
    required = list(required)
    if required:
        schema["required"] = required
    return schema


def entity_required(entity: Entity) -> list[str]:
    """Return the primary, non-optional fields: the only ones the original marks required."""
    return [f.name for f in entity.fields if f.primary and not f.optional]


def render_json(document: Any, *, ensure_ascii: bool = False) -> str:
    """Return ``document`` as JSON with sorted keys, 2-space indentation and a final newline.

    The bytes are exactly ``json.dumps(document, indent=2, sort_keys=True,
    ensure_ascii=False) + "\\n"`` (the tests hold it to that), written by a direct recursive
    walk: the standard encoder drops to its slow pure-Python path whenever it indents,
    and a big schema's OpenAPI document is megabytes of it. With ``ensure_ascii`` the bytes
    are those of ``ensure_ascii=True`` (the MCP server's embedded tool table).
    """
    parts: list[str] = []
    append = parts.append
    string = encode_basestring_ascii if ensure_ascii else encode_basestring

    def write(value: Any, pad: str) -> None:
        if isinstance(value, str):
            append(string(value))
        elif isinstance(value, dict):
            if not value:
                append("{}")
                return
            inner = pad + "  "
            separator = "{" + inner
            for key in sorted(value):
                append(separator)
                append(string(key))
                append(": ")
                item = value[key]
                # Most leaves are strings: written here, not through one more call.
                if type(item) is str:
                    append(string(item))
                else:
                    write(item, inner)
                separator = "," + inner
            append(pad + "}")
        elif isinstance(value, list | tuple):
            if not value:
                append("[]")
                return
            inner = pad + "  "
            separator = "[" + inner
            for item in value:
                append(separator)
                if type(item) is str:
                    append(string(item))
                else:
                    write(item, inner)
                separator = "," + inner
            append(pad + "]")
        elif value is True:
            append("true")
        elif value is False:
            append("false")
        elif value is None:
            append("null")
        elif isinstance(value, int):
            append(int.__repr__(value))
        elif isinstance(value, float):
            append(json.dumps(value))
        else:
            raise TypeError(f"cannot write {type(value).__name__} as JSON")

    write(document, "\n")
    parts.append("\n")
    return "".join(parts)

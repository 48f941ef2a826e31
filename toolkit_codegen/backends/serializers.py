"""The ``serializers`` backend: DRF serializers in ``generated/serializers.py``.

One serializer per entity and message (``UserSerializer``; drf-spectacular component
``<module>_<Name>``, e.g. ``default_User``), one per rpc with a JSON body
(``<Service><Rpc>RequestSerializer``; component ``<module>_<Service><Rpc>Request``, as the
compiled OpenAPI document names it) and one per rpc with path or query parameters
(``<Service><Rpc>ParamsSerializer``; validation only, never a component). Every
``@validate`` rule is enforced; the field mapping is in :mod:`._django_fields`.

``COMPONENTS`` and ``ENUMS`` list every entity, message and named enum, so the generated
views can register them all with drf-spectacular: the served document then has the same
components as the compiled one, used by an rpc or not.
"""

from __future__ import annotations

from ..escaping import py_docstring
from ..nodes import Diagnostic, Entity, Field, Message, Schema
from ..pysource import Call, Dict, List, Raw, Tuple, assign, py_str, sorted_all
from . import BackendError, BackendOptions
from ._django_common import (
    BODY_METHODS,
    PY_HEADER,
    RpcRef,
    check_names,
    component_name,
    http_rpcs,
    request_component_name,
)
from ._django_fields import enum_constant, serializer_class, serializer_field
from .models import package_init

__all__ = ["body_params", "generate", "params_class", "request_class", "url_params"]


def request_class(ref: RpcRef) -> str:
    """Return the body serializer of an rpc (``UserServiceCreateUserRequestSerializer``)."""
    return f"{ref.service.name}{ref.rpc.name}RequestSerializer"


def params_class(ref: RpcRef) -> str:
    """Return the path/query serializer of an rpc (``UserServiceGetUserParamsSerializer``)."""
    return f"{ref.service.name}{ref.rpc.name}ParamsSerializer"


def body_params(ref: RpcRef) -> list:
    """Return the rpc parameters that are JSON body members."""
    if ref.method not in BODY_METHODS:
        return []
    in_path = set(ref.rpc.http.path_params) if ref.rpc.http else set()
    return [p for p in ref.rpc.params if p.name not in in_path]


def url_params(ref: RpcRef) -> list:
    """Return the rpc parameters taken from the path or the query string."""
    body = {p.name for p in body_params(ref)}
    return [p for p in ref.rpc.params if p.name not in body]


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``generated/__init__.py`` and ``generated/serializers.py``."""
    del options
    check_names(schema, "serializers")
    return {"generated/__init__.py": package_init(), "generated/serializers.py": render(schema)}


def render(schema: Schema) -> str:
    """Return the text of ``generated/serializers.py``."""
    blocks: list[str] = []
    names: list[str] = []
    owners: dict[str, str] = {}
    problems: list[Diagnostic] = []

    def claim(name: str, owner: str, node: object) -> None:
        previous = owners.setdefault(name, owner)
        if previous != owner:
            pos = node.pos  # type: ignore[attr-defined]
            message = f"serializer {name} is generated for both {previous} and {owner}"
            problems.append(Diagnostic(pos, "serializers", message))
        names.append(name)

    enums = [assign(enum_constant(e.name), Tuple(list(e.values))) for e in schema.enums]
    for entity in schema.entities:
        claim(serializer_class(entity.name), f"entity {entity.name}", entity)
        blocks.append(_type_class(schema, entity))
    ordered, deferred = _message_order(schema)
    for message in ordered:
        claim(serializer_class(message.name), f"message {message.name}", message)
        blocks.append(_type_class(schema, message, skip=deferred.get(message.name, ())))
    for ref in http_rpcs(schema):
        owner = f"rpc {ref.service.name}.{ref.rpc.name}"
        body = body_params(ref)
        if body:
            claim(request_class(ref), owner, ref.rpc)
            component = request_component_name(ref)
            doc = f"The JSON body of {ref.service.name}.{ref.rpc.name}."
            blocks.append(_class(request_class(ref), component, doc, _param_fields(schema, body)))
        params = url_params(ref)
        if params:
            claim(params_class(ref), owner, ref.rpc)
            doc = f"The path and query parameters of {ref.service.name}.{ref.rpc.name}."
            fields = _param_fields(schema, params, text_input=True)
            blocks.append(_class(params_class(ref), None, doc, fields))
    if problems:
        raise BackendError(problems)
    tail: list[str] = []
    for message_name, fields in sorted(deferred.items()):
        message = schema.message(message_name)
        assert message is not None
        for f in message.fields:
            if f.name in fields:
                expr = serializer_field(schema, f.type, f.validation, f.default).flat()
                target = f"{serializer_class(message_name)}._declared_fields[{py_str(f.name)}]"
                tail.append(f"{target} = {expr}")
    components = [serializer_class(x.name) for x in (*schema.entities, *ordered)]
    enum_map = Dict(
        [(component_name(schema, e.name), Raw(enum_constant(e.name))) for e in schema.enums]
    )
    uses_fields = any("fields." in text for text in (*blocks, *tail))
    out = [
        PY_HEADER,
        '"""DRF serializers of the schema\'s entities, messages and rpc parameters."""',
        "",
        "from drf_spectacular.utils import extend_schema_serializer",
        "from rest_framework import serializers",
        *(["from toolkit_batteries.api_runtime import fields"] if uses_fields else []),
        "",
        assign("__all__", List(sorted_all(["COMPONENTS", "ENUMS", *names]))),
    ]
    if enums:
        out += ["", *enums]
    for block in blocks:
        out += ["", "", block]
    out += ["", ""]
    if tail:
        out += ["# Fields that refer back to a message declared later (recursive messages).", *tail]
        out += [""]
    out += [
        "#: Every entity and message serializer: drf-spectacular components, used or not.",
        assign("COMPONENTS", List([Raw(c) for c in components])),
        "#: Every named enum: component name -> values.",
        assign("ENUMS", enum_map),
    ]
    return "\n".join(out) + "\n"


def _field_lines(schema: Schema, fields: list[Field], skip: tuple[str, ...] = ()) -> list[str]:
    return [
        assign(f.name, serializer_field(schema, f.type, f.validation, f.default), indent=1)
        for f in fields
        if f.name not in skip
    ]


def _param_fields(schema: Schema, params: list, *, text_input: bool = False) -> list[str]:
    return [
        assign(
            p.name, serializer_field(schema, p.type, p.validation, text_input=text_input), indent=1
        )
        for p in params
    ]


def _type_class(schema: Schema, node: Entity | Message, skip: tuple[str, ...] = ()) -> str:
    kind = "entity" if isinstance(node, Entity) else "message"
    doc = " ".join(node.doc.split()) or f"The {node.name} {kind}."
    lines = _field_lines(schema, list(node.fields), skip)
    if isinstance(node, Entity):
        from ._relations import m2m_id_lists

        for name, typ in m2m_id_lists(schema, node):
            # A many_to_many answers the related rows' ids (read from the relation).
            child = serializer_field(schema, typ.element, None)
            field = Call("fields.RelatedIdsField", [], [("child", child)])
            lines.append(assign(name, field, indent=1))
    return _class(serializer_class(node.name), component_name(schema, node.name), doc, lines)


def _class(name: str, component: str | None, doc: str, lines: list[str]) -> str:
    if not doc.endswith("."):
        doc += "."
    if len(doc) + 7 > 100:
        doc = doc[:88].rstrip() + "..."
    doc = py_docstring(doc)
    head = []
    if component is not None:
        head.append(f"@extend_schema_serializer(component_name={py_str(component)})")
    head.append(f"class {name}(serializers.Serializer):")
    head.append(f'    """{doc}"""')
    if lines:
        head.append("")
    return "\n".join([*head, *lines])


def _message_order(schema: Schema) -> tuple[list[Message], dict[str, tuple[str, ...]]]:
    """Return messages so each comes after those it uses, and the fields closing a cycle.

    A field whose message is not yet defined when its own message is (a cycle) is set
    after both classes exist, through ``_declared_fields``.
    """
    messages = {m.name: m for m in schema.messages}
    done: list[Message] = []
    seen: set[str] = set()
    active: set[str] = set()
    deferred: dict[str, list[str]] = {}

    def visit(message: Message) -> None:
        seen.add(message.name)
        active.add(message.name)
        for f in message.fields:
            target = messages.get(f.type.name)
            if target is None:
                continue
            if target.name in active:
                deferred.setdefault(message.name, []).append(f.name)
            elif target.name not in seen:
                visit(target)
        active.discard(message.name)
        done.append(message)

    for message in schema.messages:
        if message.name not in seen:
            visit(message)
    return done, {k: tuple(v) for k, v in deferred.items()}

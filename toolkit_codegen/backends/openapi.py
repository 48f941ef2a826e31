"""The ``openapi`` backend: OpenAPI 3.0.3 documents built as dicts and written as JSON.

It returns ``openapi.json`` (every module; title ``toolkit API``; components named
``<moduleLabel>_<Name>`` such as ``default_User``) and ``<label>/openapi.json`` per module
(bare component names; title = the label; ``<version>/<label>/`` for a versioned module);
``compile`` writes them under ``openapi/``. The shapes follow the spec's table and
the original toolkit: operationId ``<Service>_<Rpc>``; path parameters from ``{name}``;
GET/DELETE take the other parameters from the query, POST/PUT/PATCH from a request
component ``<Service><Rpc>Request``; a ``200`` ``OK`` response referencing the returned type
(``{items, next_cursor}`` for paginated rpcs, which also take ``cursor`` and ``limit``);
one response per ``errors:`` status; ``bearerAuth`` security on ``auth: required`` and on
a ``permission: check(...)``; ``x-roles`` (the roles of ``auth: required(roles: {...})``)
and ``x-permission`` (``"none"`` or ``{action, resource, owner_field}``) extensions.

JSON is written with sorted keys and 2-space indentation, so the same schema always gives
the same bytes and a diff of two documents reads path by path. Two rpcs on one METHOD and
path (``{id}`` and ``{user_id}`` count as the same), a repeated operationId, or a request
component whose name another type already has, raise :class:`BackendError` naming both
owners (``default.UserService.GetUser``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..nodes import Diagnostic, Entity, Enum, Module, Permission, Rpc, Schema, Service
from . import BackendError, BackendOptions
from ._jsonschema import (
    CURSOR_SCHEMA,
    JSON,
    DeclIndex,
    entity_required,
    module_dir,
    object_schema,
    openapi_type_schema,
    owner_name,
    render_json,
    rpc_type_names,
)

__all__ = [
    "OPENAPI_VERSION",
    "generate",
    "json_schema_for_entity",
    "permission_extension",
    "render_json",
    "roles_description",
]

OPENAPI_VERSION = "3.0.3"
#: ``info.title`` of the merged document (per-module documents use the module label).
MERGED_TITLE = "toolkit API"
API_VERSION = "0.0.0"
BEARER_SCHEME: JSON = {"type": "http", "scheme": "bearer"}
JSON_MEDIA = "application/json"
#: Methods whose non-path parameters travel in the query string rather than a JSON body.
QUERY_METHODS = frozenset({"GET", "DELETE"})
_PATH_PARAM = re.compile(r"\{[^{}]*\}")


def roles_description(roles: Iterable[str]) -> str:
    """Return the sentence that says what ``x-roles`` means: any one listed role is enough."""
    return (
        "Requires a bearer token holding any one of the roles in x-roles ("
        + ", ".join(roles)
        + "); a caller holding none of them is refused with 403."
    )


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return the merged document and one document per module."""
    del options  # the documents do not depend on the Django app
    builder = _Builder(DeclIndex(schema))
    files = {"openapi.json": render_json(builder.document(MERGED_TITLE, schema.modules))}
    for module in schema.modules:
        doc = builder.document(module.label, (module,), qualified=False)
        files[f"{module_dir(module)}/openapi.json"] = render_json(doc)
    if builder.problems:
        raise BackendError(list(builder.problems))
    return files


def json_schema_for_entity(schema: Schema, name: str) -> JSON:
    """Return a standalone JSON Schema (draft 2020-12) for one entity or message.

    The document is ``{"$schema", "$ref": "#/definitions/<Name>", "definitions"}``, with the
    type and everything it reaches by bare name. OpenAPI 3.0 spellings are turned into
    JSON Schema ones (``nullable`` becomes a ``"null"`` type, boolean exclusive bounds
    become numeric), so a stock JSON Schema validator reads it as the API means it.
    Raises ``KeyError`` for a name that is not an entity or message.
    """
    index = DeclIndex(schema)
    decl = index.get(name)
    if decl is None or decl.kind == "enum":
        raise KeyError(f"no entity or message named {name!r}")
    builder = _Builder(index)
    definitions = {
        n: _to_json_schema(builder.type_component(n, lambda ref: f"#/definitions/{ref}"))
        for n in index.closure([name])
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"#/definitions/{name}",
        "definitions": definitions,
    }


def _to_json_schema(schema: Any) -> Any:
    """Rewrite OpenAPI 3.0 ``nullable`` and boolean exclusive bounds as JSON Schema."""
    if isinstance(schema, list):
        return [_to_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _to_json_schema(value) for key, value in schema.items()}
    if out.pop("exclusiveMinimum", False):
        out["exclusiveMinimum"] = out.pop("minimum")
    if out.pop("exclusiveMaximum", False):
        out["exclusiveMaximum"] = out.pop("maximum")
    if out.pop("nullable", False):
        if "allOf" in out:
            return {"anyOf": [*out.pop("allOf"), {"type": "null"}], **out}
        if "type" in out:
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


@dataclass
class _Document:
    """One document under construction, with who owns each component and route."""

    qualified: bool
    schemas: dict[str, JSON] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)
    routes: dict[tuple[str, str], str] = field(default_factory=dict)
    operation_ids: dict[str, str] = field(default_factory=dict)


class _Builder:
    """Builds documents from one schema, collecting backend diagnostics as it goes."""

    def __init__(self, index: DeclIndex) -> None:
        self.index = index
        #: Diagnostics found while building (a set: the merged and module documents
        #: see the same clash).
        self.problems: set[Diagnostic] = set()

    # -- names --------------------------------------------------------------------------

    def component_name(self, module: Module, name: str, qualified: bool) -> str:
        """Return a component's name: bare, or ``<label>_<Name>`` in the merged document."""
        return f"{module.label}_{name}" if qualified else name

    def type_ref(self, name: str, qualified: bool) -> str:
        """Return the ``$ref`` of a declared type."""
        decl = self.index.get(name)
        owner = decl.module if decl else Module()
        return f"#/components/schemas/{self.component_name(owner, name, qualified)}"

    # -- documents ----------------------------------------------------------------------

    def document(self, title: str, modules: Iterable[Module], qualified: bool = True) -> JSON:
        """Return one OpenAPI document covering ``modules``."""
        modules = tuple(modules)
        doc = _Document(qualified)
        own = [d.node.name for m in modules for d in self.index.of_module(m)]
        used = [n for m in modules for s in m.services for r in s.rpcs for n in rpc_type_names(r)]
        for name in self.index.closure([*own, *used]):
            decl = self.index.get(name)
            assert decl is not None  # closure() only returns declared names
            component = self.component_name(decl.module, name, qualified)
            schema = self.type_component(name, lambda n: self.type_ref(n, qualified))
            owner = owner_name(decl.module, name)
            self._add_component(doc, component, schema, owner, decl.node, name)
        paths: dict[str, dict[str, JSON]] = {}
        for module in modules:
            for service in module.services:
                for rpc in service.rpcs:
                    if rpc.http is None:
                        continue  # no HTTP binding: nothing to describe
                    operation = self.operation(doc, module, service, rpc)
                    paths.setdefault(rpc.http.path, {})[rpc.http.method.lower()] = operation
        return {
            "openapi": OPENAPI_VERSION,
            "info": {"title": title, "version": API_VERSION},
            "paths": paths,
            "components": {
                "schemas": doc.schemas,
                "securitySchemes": {"bearerAuth": BEARER_SCHEME},
            },
        }

    def type_component(self, name: str, ref: Any) -> JSON:
        """Return the component schema of an entity, message or named enum."""
        decl = self.index.get(name)
        assert decl is not None
        node = decl.node
        if isinstance(node, Enum):
            return {"type": "string", "enum": list(node.values)}
        required = entity_required(node) if isinstance(node, Entity) else []
        schema = object_schema(
            node.fields, lambda f: openapi_type_schema(f.type, f.validation, ref), required
        )
        if isinstance(node, Entity):
            from ._relations import m2m_id_lists

            for rel_name, typ in m2m_id_lists(self.index.schema, node):
                schema["properties"][rel_name] = openapi_type_schema(typ, None, ref)
        return schema

    def _add_component(
        self, doc: _Document, name: str, schema: JSON, owner: str, node: Any, bare: str
    ) -> None:
        """Add a component unless another owner has its name (then report, naming both).

        The message names the bare component, so the merged and the module documents
        report one clash once.
        """
        previous = doc.owners.get(name)
        if previous is not None and previous != owner:
            self.problems.add(
                Diagnostic(
                    node.pos,
                    "openapi",
                    f"component {bare} is declared by both {previous} and {owner}",
                )
            )
            return
        doc.owners[name] = owner
        doc.schemas[name] = schema

    # -- operations ---------------------------------------------------------------------

    def operation(self, doc: _Document, module: Module, service: Service, rpc: Rpc) -> JSON:
        """Return the operation object of one rpc (registering its request component)."""
        assert rpc.http is not None
        method = rpc.http.method.upper()
        owner = owner_name(module, service.name, rpc.name)
        self._claim_route(doc, method, rpc, owner)

        def ref(name: str) -> str:
            return self.type_ref(name, doc.qualified)

        operation_id = f"{service.name}_{rpc.name}"
        previous = doc.operation_ids.setdefault(operation_id, owner)
        if previous != owner:
            self.problems.add(
                Diagnostic(
                    rpc.pos,
                    "openapi",
                    f"operationId {operation_id} is declared by both {previous} and {owner}",
                )
            )
        in_path = set(rpc.http.path_params)
        parameters: list[JSON] = []
        body: JSON = {}
        for param in rpc.params:
            schema = openapi_type_schema(param.type, param.validation, ref)
            if param.name in in_path:
                parameters.append(_parameter("path", param.name, True, schema))
            elif method in QUERY_METHODS:
                parameters.append(_parameter("query", param.name, not param.type.optional, schema))
            else:
                body[param.name] = schema
        if rpc.paginated:
            parameters.append(_parameter("query", "cursor", False, dict(CURSOR_SCHEMA)))
            limit = {"type": "integer", "format": "int32", "minimum": 1, "maximum": 200}
            parameters.append(_parameter("query", "limit", False, limit))
        operation: JSON = {"operationId": operation_id, "responses": self.responses(rpc, ref)}
        if parameters:
            operation["parameters"] = parameters
        if body:
            bare = f"{service.name}{rpc.name}Request"
            component = self.component_name(module, bare, doc.qualified)
            body_schema = {"type": "object", "properties": body}
            self._add_component(doc, component, body_schema, f"{owner} request", rpc, bare)
            operation["requestBody"] = _json_content({"$ref": f"#/components/schemas/{component}"})
        checked = rpc.permission is not None and rpc.permission.check
        if (rpc.auth is not None and rpc.auth.required) or checked:
            operation["security"] = [{"bearerAuth": []}]
        if rpc.auth is not None and rpc.auth.roles:
            operation["x-roles"] = list(rpc.auth.roles)
            operation["description"] = roles_description(rpc.auth.roles)
        if rpc.permission is not None:
            operation["x-permission"] = permission_extension(rpc.permission)
        return operation

    def _claim_route(self, doc: _Document, method: str, rpc: Rpc, owner: str) -> None:
        assert rpc.http is not None
        # ``/users/{id}`` and ``/users/{user_id}`` are one route to a router.
        key = (method, _PATH_PARAM.sub("{}", rpc.http.path))
        previous = doc.routes.setdefault(key, owner)
        if previous != owner:
            self.problems.add(
                Diagnostic(
                    rpc.http.pos,
                    "openapi",
                    f"{method} {rpc.http.path} is declared by both {previous} and {owner}",
                )
            )

    def responses(self, rpc: Rpc, ref: Any) -> JSON:
        """Return ``200`` with the returned type, plus one entry per ``errors:`` status."""
        returned = openapi_type_schema(rpc.returns, None, ref)
        if rpc.paginated:
            returned = {
                "type": "object",
                "properties": {
                    "items": {"type": "array", "items": returned},
                    # DESIGN.md: null once the last page is reached.
                    "next_cursor": {"type": "string", "nullable": True},
                },
            }
        out: JSON = {"200": {"description": "OK", **_json_content(returned)}}
        described: dict[str, list[str]] = {}
        for error in rpc.errors:
            text = error.code.upper()
            if error.message:
                text = f"{text}: {error.message}"
            described.setdefault(str(error.status), []).append(text)
        for status, parts in described.items():
            out[status] = {"description": "; ".join(parts)}
        return out


def _parameter(where: str, name: str, required: bool, schema: JSON) -> JSON:
    return {"in": where, "name": name, "required": required, "schema": schema}


def permission_extension(permission: Permission) -> JSON | str:
    """Return the ``x-permission`` value of an operation: ``"none"`` or the check.

    ``{"action": "note.edit", "resource": "Note", "owner_field": "owner_id"}``, the
    resource keys only when given. The served document (views) carries the same value.
    """
    if not permission.check:
        return "none"
    out: JSON = {"action": permission.action or ""}
    if permission.resource is not None:
        out["resource"] = permission.resource
    if permission.owner_field is not None:
        out["owner_field"] = permission.owner_field
    return out


def _json_content(schema: JSON) -> JSON:
    return {"content": {JSON_MEDIA: {"schema": schema}}}

"""The ``mcp`` backend: each rpc an MCP tool, as manifests and as a runnable stdio server.

Files (under ``mcp/``):

- ``mcp.json``: ``{"name": "toolkit", "services": [...]}`` over every module, and
  ``<label>/mcp.json``: ``{"module": "<label>", "services": [...]}`` per module.
  A service entry is ``{"service", "module", "tools", "definitions"?}`` and stands alone:
  its ``definitions`` hold every type its tools reach, keyed ``<ownerModule>_<Name>``.
- ``server.py``: a stdio MCP server on the official ``mcp`` SDK (low-level ``Server``) that
  lists one tool per rpc and runs the matching function of ``handlers.py``.
- ``handlers.py``: one stub per tool that raises ``NotImplementedError("not implemented:
  <tool>")``, which the server returns as an error result (``isError: true``).

A tool is named ``<module>_<Service>_<Rpc>`` (``default_UserService_GetUser``), described by
the rpc's doc comment (else ``<Service>.<Rpc> RPC``), and takes the rpc's parameters as
``inputSchema`` properties (``cursor`` and ``limit`` added when paginated). The manifest
describes shapes for tool selection only, so it carries no formats or validation bounds.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..nodes import Diagnostic, Entity, Enum, Module, Rpc, Schema, Service, snake_case
from . import BackendError, BackendOptions
from ._jsonschema import (
    JSON,
    DeclIndex,
    RefFn,
    entity_required,
    mcp_type_schema,
    module_dir,
    object_schema,
    owner_name,
    render_json,
    rpc_type_names,
)
from ._mcp_server import HandlerParam, ServerTool, python_type, render_handlers, render_server
from ._mcp_validation import validation_schema

__all__ = ["MERGED_NAME", "generate", "tool_name"]

#: ``name`` of the merged manifest.
MERGED_NAME = "toolkit"
_DEFINITIONS = "#/definitions/"


def tool_name(module: Module, service: Service, rpc: Rpc) -> str:
    """Return ``<module>_<Service>_<Rpc>``, the tool's name."""
    return f"{module.label}_{service.name}_{rpc.name}"


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return the manifests, ``server.py`` and ``handlers.py``."""
    del options  # the server does not depend on the Django app
    index = DeclIndex(schema)
    problems: list[Diagnostic] = []
    files: dict[str, str] = {}
    every_service: list[JSON] = []
    server_tools: list[ServerTool] = []
    tools_seen: dict[str, str] = {}
    handlers_seen: dict[str, str] = {}
    for module in schema.modules:
        services = []
        for service in module.services:
            manifest = _service_manifest(index, module, service)
            services.append(manifest)
            definitions = manifest.get("definitions", {})
            for rpc, tool in zip(service.rpcs, manifest["tools"], strict=True):
                owner = owner_name(module, service.name, rpc.name)
                handler = snake_case(tool["name"])
                for seen, key, what in (
                    (tools_seen, tool["name"], "tool"),
                    (handlers_seen, handler, "handler function"),
                ):
                    previous = seen.setdefault(key, owner)
                    if previous != owner:
                        problems.append(
                            Diagnostic(
                                rpc.pos,
                                "mcp",
                                f"{what} {key} is declared by both {previous} and {owner}",
                            )
                        )
                server_tools.append(_server_tool(index, service, rpc, tool, handler, definitions))
        every_service.extend(services)
        files[f"{module_dir(module)}/mcp.json"] = render_json(
            {"module": module.label, "services": services}
        )
    if problems:
        raise BackendError(problems)
    files["mcp.json"] = render_json({"name": MERGED_NAME, "services": every_service})
    files["server.py"] = render_server(server_tools)
    files["handlers.py"] = render_handlers(server_tools)
    return dict(sorted(files.items()))


def _definition_key(index: DeclIndex, name: str) -> str:
    decl = index.get(name)
    label = decl.module.label if decl else "default"
    return f"{label}_{name}"


def _service_manifest(index: DeclIndex, module: Module, service: Service) -> JSON:
    """Return one self-contained service entry: its tools and the definitions they use."""

    def ref(name: str) -> str:
        return _DEFINITIONS + _definition_key(index, name)

    tools = [_tool(module, service, rpc, ref) for rpc in service.rpcs]
    used = [n for rpc in service.rpcs for n in rpc_type_names(rpc)]
    definitions: JSON = {}
    for name in index.closure(used):
        decl = index.get(name)
        assert decl is not None
        node = decl.node
        if isinstance(node, Enum):
            body: JSON = {"type": "string", "enum": list(node.values)}
        else:
            required = entity_required(node) if isinstance(node, Entity) else []
            body = object_schema(node.fields, lambda f: mcp_type_schema(f.type, ref), required)
        definitions[_definition_key(index, name)] = body
    manifest: JSON = {"service": service.name, "module": module.label, "tools": tools}
    if definitions:
        manifest["definitions"] = definitions
    return manifest


def _tool(module: Module, service: Service, rpc: Rpc, ref: RefFn) -> JSON:
    """Return one tool of the manifest."""
    properties = {p.name: mcp_type_schema(p.type, ref) for p in rpc.params}
    output = mcp_type_schema(rpc.returns, ref)
    if rpc.paginated:
        properties["cursor"] = {"type": "string"}
        properties["limit"] = {"type": "integer"}
        output = {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": output},
                "next_cursor": {"type": "string"},
            },
        }
    tool: JSON = {
        "name": tool_name(module, service, rpc),
        "description": rpc.doc.strip() or f"{service.name}.{rpc.name} RPC",
        "inputSchema": {"type": "object", "properties": properties},
        "outputSchema": output,
    }
    if rpc.paginated:
        tool["paginated"] = True
    return tool


def _refs(value: object) -> Iterator[str]:
    """Yield the definition keys of every ``#/definitions/...`` reference in ``value``."""
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFINITIONS):
            yield ref.removeprefix(_DEFINITIONS)
        for item in value.values():
            yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


def _server_tool(
    index: DeclIndex,
    service: Service,
    rpc: Rpc,
    tool: JSON,
    handler: str,
    definitions: JSON,
) -> ServerTool:
    """Return what the server lists for a tool: its input schema with the definitions it uses.

    A tool's input schema reaches the client alone, so every ``$ref`` in it must resolve
    inside it: the definitions it reaches, transitively, travel with it.
    """
    schema: JSON = dict(tool["inputSchema"])
    needed: dict[str, None] = {}
    queue = list(_refs(schema))
    while queue:
        key = queue.pop(0)
        if key not in needed and key in definitions:
            needed[key] = None
            queue.extend(_refs(definitions[key]))
    if needed:
        schema["definitions"] = {key: definitions[key] for key in sorted(needed)}
    params = tuple(
        HandlerParam(
            p.name,
            python_type(p.type, _is_enum(index, p.type.name)),
            p.type.optional,
        )
        for p in rpc.params
    )
    returned = rpc.returns.name
    if rpc.paginated:
        returns_text = f'{{"items": [{returned}, ...], "next_cursor": str | None}}'
    else:
        returns_text = f"the {returned} as a dict"
    decl = index.get(returned)
    return ServerTool(
        name=tool["name"],
        description=tool["description"],
        handler=handler,
        input_schema=schema,
        validation=validation_schema(index, rpc),
        rpc=rpc,
        service=service.name,
        params=params,
        returns_text=returns_text,
        returns_object=rpc.paginated or (decl is not None and decl.kind != "enum"),
    )


def _is_enum(index: DeclIndex, name: str) -> bool:
    decl = index.get(name)
    return decl is not None and decl.kind == "enum"

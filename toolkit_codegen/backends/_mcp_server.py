"""Render the ``mcp`` backend's Python files: ``server.py`` and the ``handlers.py`` stubs.

The server is one fixed program plus a table of tools. The table is embedded as JSON in a
raw string, so any description or schema round-trips exactly and the file's layout never
depends on its contents. The generated files pass ``ruff format --check`` and ``ruff
check`` (the tests run both), so they read like hand-written code in a user's project.
"""

from __future__ import annotations

import keyword
import textwrap
from dataclasses import dataclass
from typing import Any

from ..escaping import py_docstring, py_identifier
from ..nodes import Rpc, TypeRef
from . import GENERATED_NOTICE
from ._jsonschema import render_json

__all__ = ["HandlerParam", "ServerTool", "python_type", "render_handlers", "render_server"]

#: Name and version the server reports in ``initialize``.
SERVER_NAME = "toolkit-mcp-server"
SERVER_VERSION = "0.0.0"
_LINE = 100
_TOOLS_MARK = "@@TOOLS_JSON@@"

#: Scalar -> the Python type a handler receives (JSON decoding gives these).
_PY_TYPES = {
    "uuid": "str",
    "string": "str",
    "timestamp": "str",
    "date": "str",
    "bytes": "str",
    "int32": "int",
    "int64": "int",
    "float32": "float",
    "float64": "float",
    "bool": "bool",
    "json": "Any",
}


@dataclass(frozen=True, slots=True)
class HandlerParam:
    """One keyword argument of a handler."""

    name: str
    #: Python type of the JSON value, without ``| None``.
    hint: str
    optional: bool


@dataclass(frozen=True, slots=True)
class ServerTool:
    """One tool as the server lists it, and the handler function it calls."""

    name: str
    description: str
    handler: str
    #: The tool's input schema, with the definitions its ``$ref``s need.
    input_schema: dict[str, Any]
    #: What the arguments must satisfy before the handler runs (types, bounds, required).
    validation: dict[str, Any]
    rpc: Rpc
    service: str
    #: The rpc's parameters as the handler receives them.
    params: tuple[HandlerParam, ...]
    #: What the handler returns, in words, for its docstring.
    returns_text: str
    #: True when the handler returns a dict (an entity, a message or a page).
    returns_object: bool


_SERVER = '''# @@NOTICE@@
@@NOQA@@"""A stdio MCP server that offers each rpc of the toolkit schema as a tool.

Run it with ``python server.py`` (it needs the ``mcp`` package, 2.x). ``tools/list``
answers one tool per rpc, with the rpc's parameters as its input schema; ``tools/call``
runs the function named in ``TOOLS`` from ``handlers.py`` next to this file. A handler
returns any JSON-ready value; an exception it raises becomes an error result
(``isError: true``) carrying its message, so an untouched stub answers
``not implemented: <tool>``.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import jsonschema
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import handlers  # noqa: E402  (the user's code, next to this file)

SERVER_NAME = "@@SERVER_NAME@@"
SERVER_VERSION = "@@SERVER_VERSION@@"

#: One entry per rpc: the tool's name, description, handler function and input schema.
TOOLS: list[dict[str, Any]] = json.loads(
    r"""
@@TOOLS_JSON@@
"""
)
TOOLS_BY_NAME: dict[str, dict[str, Any]] = {tool["name"]: tool for tool in TOOLS}


#: ``@validate`` rule -> what the argument must be (messages name the argument, not its value).
_RULES = {
    "minLength": "at least {} characters long",
    "maxLength": "at most {} characters long",
    "minimum": "at least {}",
    "maximum": "at most {}",
    "exclusiveMinimum": "greater than {}",
    "exclusiveMaximum": "less than {}",
    "format": "a valid {}",
    "type": "of type {}",
    "enum": "one of {}",
}


def _invalid(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """Return why ``arguments`` do not satisfy ``schema`` (names the argument), or None."""
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path) or "arguments"
    if error.validator == "required":
        missing = [n for n in error.validator_value if n not in error.instance]
        prefix = f"{where}." if error.absolute_path else ""
        return f"{prefix}{missing[0]}: required"
    if error.validator == "additionalProperties":
        return f"{where}: unknown argument"
    rule = _RULES.get(str(error.validator))
    if rule is None:
        return f"{where}: has the wrong type or value"
    value = error.validator_value
    shown = ", ".join(map(str, value)) if isinstance(value, list) else value
    return f"{where}: must be {rule.format(shown)}"


def _error(text: str) -> types.CallToolResult:
    """Return an error result: the client's model reads ``text`` and may try again."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    """List one tool per rpc."""
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=tool["name"],
                description=tool["description"],
                input_schema=tool["inputSchema"],
            )
            for tool in TOOLS
        ]
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    """Run the tool's handler and turn what it returns, or raises, into a tool result."""
    tool = TOOLS_BY_NAME.get(params.name)
    if tool is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool: {params.name}")
    function = getattr(handlers, tool["handler"], None)
    if function is None:
        return _error(f"not implemented: {params.name}")
    arguments = dict(params.arguments or {})
    problem = _invalid(tool["validation"], arguments)
    if problem is not None:  # checked before any handler code runs, as the HTTP side does
        return _error(f"Input validation error: {problem}")
    try:
        inspect.signature(function).bind(**arguments)
    except TypeError as exc:
        return _error(f"invalid arguments for {params.name}: {exc}")
    try:
        if inspect.iscoroutinefunction(function):
            result = await function(**arguments)
        else:
            # Blocking handlers (database calls) run off the event loop.
            result = await anyio.to_thread.run_sync(functools.partial(function, **arguments))
    except Exception as exc:  # the handler's failure is the tool's answer, not a crash
        return _error(str(exc) or type(exc).__name__)
    text = json.dumps(result, default=str, ensure_ascii=False)
    structured = json.loads(text)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured if isinstance(structured, dict) else None,
    )


server = Server(
    SERVER_NAME, version=SERVER_VERSION, on_list_tools=list_tools, on_call_tool=call_tool
)


async def main() -> None:
    """Serve MCP over stdin and stdout until the client hangs up."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
'''

_HANDLERS_HEAD = '''# Generated by toolkit from the schema as a starting point: this file is yours.
"""Handlers of the MCP server's tools: one function per rpc, called by ``server.py``.

A function receives the rpc's parameters as keyword arguments, decoded from JSON
(strings, numbers, booleans, dicts), and returns a JSON-ready value: usually a dict shaped
like the rpc's return type, or ``{"items": [...], "next_cursor": ...}`` for a paginated
rpc. Raise an exception to answer with an error result; its message is what the client
sees. A handler may be ``async``. Each stub raises ``NotImplementedError`` until replaced.
"""

from __future__ import annotations

from typing import Any
'''


def render_server(tools: list[ServerTool]) -> str:
    """Return ``server.py`` with the tool table embedded."""
    table = [
        {
            "name": t.name,
            "description": t.description,
            "handler": t.handler,
            "inputSchema": t.input_schema,
            "validation": t.validation,
        }
        for t in tools
    ]
    # ASCII-only JSON holds backslashes only inside escapes, and ``"""`` cannot occur in
    # JSON text, so a raw triple-quoted string carries it verbatim.
    # ``json.dumps(table, indent=2, sort_keys=True, ensure_ascii=True)``, written by the
    # backends' own writer (the standard encoder is pure Python once it indents).
    text = render_json(table, ensure_ascii=True).removesuffix("\n")
    assert '"""' not in text
    # Long descriptions make long lines; say so only when there are some, or ruff
    # reports the directive itself as unused.
    long_lines = any(len(line) > _LINE for line in text.splitlines())
    return (
        _SERVER.replace("@@NOTICE@@", GENERATED_NOTICE)
        .replace("@@NOQA@@", "# ruff: noqa: E501\n" if long_lines else "")
        .replace("@@SERVER_NAME@@", SERVER_NAME)
        .replace("@@SERVER_VERSION@@", SERVER_VERSION)
        .replace(_TOOLS_MARK, text)
    )


def render_handlers(tools: list[ServerTool]) -> str:
    """Return ``handlers.py``: one stub per tool, in tool order."""
    return _HANDLERS_HEAD + "".join("\n\n" + _stub(t) for t in tools)


def python_type(typ: TypeRef, is_enum: bool) -> str:
    """Return the Python type a handler receives for ``typ`` (before optionality)."""
    if typ.is_list:
        return f"list[{python_type(typ.element, False)}]"
    if typ.is_scalar:
        return _PY_TYPES[typ.name]
    if typ.is_inline_enum or is_enum:
        return "str"  # an enum arrives as its value's name
    return "dict[str, Any]"  # an entity or message arrives as a JSON object


def _parameters(tool: ServerTool) -> list[str] | None:
    """Return the keyword-only parameters, or None when a name cannot be a Python name."""
    names = [p.name for p in tool.params]
    if tool.rpc.paginated:
        names += ["cursor", "limit"]
    if any(keyword.iskeyword(n) or not n.isidentifier() for n in names):
        return None
    if len(set(names)) != len(names):
        return None
    parts = []
    for param in tool.params:
        if not param.optional:
            parts.append(f"{param.name}: {param.hint}")
        elif param.hint == "Any":
            parts.append(f"{param.name}: Any = None")
        else:
            parts.append(f"{param.name}: {param.hint} | None = None")
    if tool.rpc.paginated:
        parts += ["cursor: str | None = None", "limit: int = 50"]
    return parts


def _def_line(name: str, parameters: list[str] | None, returns: str) -> str:
    """Return the ``def`` line(s) as ``ruff format`` lays them out."""
    params = (
        ["**arguments: Any"] if parameters is None else (["*", *parameters] if parameters else [])
    )
    name = py_identifier(name, "handler function")
    one_line = f"def {name}({', '.join(params)}) -> {returns}:"
    if len(one_line) <= _LINE:
        return one_line
    inner = "".join(f"    {p},\n" for p in params)
    return f"def {name}(\n{inner}) -> {returns}:"


def _escape(text: str) -> str:
    """Return ``text`` safe inside a triple-quoted docstring."""
    return py_docstring(text)


def _docstring(tool: ServerTool) -> str:
    """Return the stub's docstring, indented, wrapped to the line length."""
    rpc = tool.rpc
    summary = f"Answer a call of rpc ``{tool.service}.{rpc.name}``."
    if len(summary) + 7 > _LINE:  # 4 spaces and the quotes; a lone long word may overflow
        summary = f"Answer a call of this rpc:\n\n``{tool.service}.{rpc.name}``"
    lines = summary.split("\n")
    doc = [_escape(line.rstrip()) for line in rpc.doc.strip().splitlines()]
    if any(doc):
        lines.append("")
        for line in doc:
            wrapped = textwrap.wrap(line, _LINE - 4, break_long_words=False) if line else []
            lines.extend(wrapped or [""])
    lines += ["", f"Return {tool.returns_text}."]
    body = "\n".join(f"    {line}" if line else "" for line in lines)
    return f'    """{body.lstrip()}\n    """'


def _stub(tool: ServerTool) -> str:
    """Return one handler stub: signature, docstring, ``raise NotImplementedError``."""
    message = f"not implemented: {tool.name}"
    # Laid out as ``ruff format`` would: one line, else the string on its own line, else
    # two strings with the tool name alone (one word, which no line limit applies to).
    call = f'    raise NotImplementedError("{message}")'
    if len(call) > _LINE:
        inner = f'        "{message}"'
        if len(inner) > _LINE:
            inner = f'        "not implemented: "\n        "{tool.name}"'
        call = f"    raise NotImplementedError(\n{inner}\n    )"
    returns = "dict[str, Any]" if tool.returns_object else "Any"
    head = _def_line(tool.handler, _parameters(tool), returns)
    return f"{head}\n{_docstring(tool)}\n{call}\n"

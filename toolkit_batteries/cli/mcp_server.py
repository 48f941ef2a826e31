"""The compiler as an MCP server: ``toolkit mcp`` serves six CLI commands as tools.

A coding agent that speaks the Model Context Protocol gets ``check``, ``compile`` (always
``--dry-run``: the server never writes generated code), ``routes``, ``explain``, ``fmt``
(list by default, ``write=true`` to rewrite) and ``breaking`` over stdio, on the official
SDK's low-level server, as the original toolkit ships one beside its CLI.

Each call runs the CLI command in a child process with ``--json`` and answers with the
command's JSON envelope (``ok``, ``command``, ``exitCode``, ``data``, ``error``), so a tool
answer is exactly what ``toolkit --json <command>`` prints and the two cannot drift. A
child process also keeps one call's state (parsed schema, Django settings) from leaking
into the next. Schema diagnostics are an answer, not an error: the result is marked as
an error only for usage errors and crashes (exit codes 1 and 2), or when the command does
not finish within ``TIMEOUT`` seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["TIMEOUT", "TOOLS", "arguments_for", "run_tool", "serve"]

_SUFFIX = ".toolkit"
#: Seconds one tool call may take (a 500-entity schema compiles in well under 2 s).
TIMEOUT = 120.0

_PATHS = {
    "type": "array",
    "items": {"type": "string"},
    "description": "schema files or directories (default: the project's schema/)",
}

#: name -> (description, JSON schema of the arguments)
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "check": (
        "Validate schema files and report file:line:col diagnostics; writes nothing.",
        {"type": "object", "properties": {"paths": _PATHS}, "additionalProperties": False},
    ),
    "compile": (
        "Compile the schema with the given backends and report what would be written "
        "(a dry run: nothing is written).",
        {
            "type": "object",
            "properties": {
                "backends": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "backends to run (default: every backend)",
                },
            },
            "additionalProperties": False,
        },
    ),
    "routes": (
        "List the HTTP routes the schema declares.",
        {"type": "object", "properties": {"paths": _PATHS}, "additionalProperties": False},
    ),
    "explain": (
        "Explain one rpc (Service.Rpc or module.Service.Rpc): route, auth, request, response.",
        {
            "type": "object",
            "properties": {"operation": {"type": "string"}, "paths": _PATHS},
            "required": ["operation"],
            "additionalProperties": False,
        },
    ),
    "fmt": (
        "List schema files whose formatting differs (exitCode 4 when any); with "
        "write=true, rewrite them in place.",
        {
            "type": "object",
            "properties": {"paths": _PATHS, "write": {"type": "boolean"}},
            "additionalProperties": False,
        },
    ),
    "breaking": (
        "List breaking changes between an old and a new schema (exitCode 4 when any).",
        {
            "type": "object",
            "properties": {
                "old": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "new": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            },
            "required": ["old", "new"],
            "additionalProperties": False,
        },
    ),
}


class ToolArgumentError(ValueError):
    """The tool's arguments do not fit its schema (the message names the argument)."""


def _strings(arguments: dict[str, Any], name: str) -> list[str]:
    value = arguments.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ToolArgumentError(f"{name}: expected a list of non-empty strings")
    return list(value)


def arguments_for(tool: str, arguments: dict[str, Any], root: Path | None = None) -> list[str]:
    """Return the CLI arguments (after ``--json``) of one tool call, or raise
    :class:`ToolArgumentError`. Nothing from the caller becomes a flag: paths that start
    with ``-`` are refused. Every path must resolve inside ``root`` (default: the current
    directory, the one the server serves): an agent reads and rewrites that project only."""
    base = (root or Path.cwd()).resolve()
    if tool not in TOOLS:
        raise ToolArgumentError(f"unknown tool: {tool}")
    allowed = set(TOOLS[tool][1]["properties"])
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise ToolArgumentError(f"unknown argument: {unknown[0]}")
    for name in TOOLS[tool][1].get("required", ()):
        if name not in arguments:
            raise ToolArgumentError(f"{name}: required")
    if tool == "compile":
        _default_confined(base)
        backends = _strings(arguments, "backends")
        argv = ["compile", "--dry-run"]
        if backends:
            argv += ["--backend", ",".join(backends)]
        return argv
    if tool == "breaking":
        old, new = _strings(arguments, "old"), _strings(arguments, "new")
        if not old or not new:
            raise ToolArgumentError("old and new: at least one path each")
        _no_flags(old + new)
        _confined("old", old, base)
        _confined("new", new, base)
        return ["breaking", *old, "--", *new]
    paths = _strings(arguments, "paths")
    _no_flags(paths)
    _confined("paths", paths, base)
    if not paths:
        _default_confined(base)
    if tool == "explain":
        operation = arguments["operation"]
        if not isinstance(operation, str) or not operation or operation.startswith("-"):
            raise ToolArgumentError("operation: expected Service.Rpc")
        return ["explain", operation, *paths]
    if tool == "fmt":
        write = arguments.get("write", False)
        if not isinstance(write, bool):
            raise ToolArgumentError("write: expected a boolean")
        return ["fmt", "-w" if write else "-l", *paths]
    return [tool, *paths]


def _no_flags(paths: list[str]) -> None:
    for path in paths:
        if path.startswith("-"):
            raise ToolArgumentError("paths: a path may not start with '-'")


def _inside(target: Path, base: Path) -> bool:
    return target == base or base in target.parents


def _confined(name: str, paths: list[str], base: Path) -> None:
    """Refuse a path that resolves (``..``, absolute, a symlink) outside ``base``.

    A directory is read recursively, so a schema file in it that is a link to a file
    outside (``schema/app.toolkit -> ~/.ssh/id_rsa``) is refused too: the command would
    read it and echo its text in diagnostics, and ``fmt`` would copy it in.
    """
    for path in paths:
        target = (base / path).resolve()
        if not _inside(target, base) or (
            target.is_dir()
            and not all(_inside(f.resolve(), base) for f in target.rglob(f"*{_SUFFIX}"))
        ):
            raise ToolArgumentError(
                f"{name}: every path must be inside the directory the server serves"
            )


def _default_confined(base: Path) -> None:
    """Refuse a call without paths when the schema the CLI would find lies outside ``base``.

    Without paths the command reads the project's ``schema/``, and the project is looked
    for in the parents too: a server started in ``project/docs`` would read ``project/``.
    """
    from .project import find_project

    project = find_project(base)
    root = project.root if project is not None else base
    schema = project.schema_dir if project is not None else base / "schema"
    if not _inside(root.resolve(), base):
        raise ToolArgumentError(
            "paths: the project around this directory is not inside the directory the server "
            "serves; pass paths inside it"
        )
    if schema.exists():
        _confined("paths", [str(schema)], base)


def run_tool(tool: str, arguments: dict[str, Any], *, cwd: Path | None = None) -> dict[str, Any]:
    """Run one tool call; return the command's JSON envelope.

    Raises :class:`ToolArgumentError` for bad arguments and ``subprocess.TimeoutExpired``
    when the command runs past :data:`TIMEOUT`.
    """
    argv = arguments_for(tool, arguments, cwd)
    env = {**os.environ, "TOOLKIT_NO_HINT": "1", "TOOLKIT_JSON": "1"}
    done = subprocess.run(  # our own CLI; the arguments were checked above
        [sys.executable, "-m", "toolkit_batteries.cli", "--json", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    try:
        envelope = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        envelope = {
            "command": argv[0],
            "ok": False,
            "exitCode": done.returncode,
            "data": None,
            "error": (done.stderr.strip().splitlines() or ["no output"])[-1],
        }
    return envelope


def serve() -> None:
    """Serve the tools over stdin and stdout until the client hangs up."""
    import anyio
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    from toolkit_batteries import __version__

    def answer(text: str, *, error: bool, data: Any = None) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=data if isinstance(data, dict) else None,
            is_error=error,
        )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=name, description=description, input_schema=schema)
                for name, (description, schema) in TOOLS.items()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool: {params.name}")
        arguments = dict(params.arguments or {})
        try:
            envelope = await anyio.to_thread.run_sync(run_tool, params.name, arguments)
        except ToolArgumentError as exc:
            return answer(f"invalid arguments for {params.name}: {exc}", error=True)
        except subprocess.TimeoutExpired:
            return answer(f"{params.name} did not finish within {TIMEOUT:.0f} s", error=True)
        failed = envelope.get("exitCode") in (1, 2)
        return answer(json.dumps(envelope, ensure_ascii=False), error=failed, data=envelope)

    server = Server(
        "toolkit", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool
    )

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)

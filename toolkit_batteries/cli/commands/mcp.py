"""``toolkit mcp``: serve the compiler's commands to coding agents over MCP (stdio).

The server itself lives in :mod:`toolkit_batteries.cli.mcp_server`; this module only
checks that the SDK is installed and starts it.
"""

from __future__ import annotations

from argparse import Namespace

from toolkit_batteries.cli.exitcodes import EXIT_USAGE
from toolkit_batteries.cli.output import CliError, Output, Result
from toolkit_batteries.cli.parser import CommandParser

DESCRIPTION = """\
Serve check, compile (dry run only), routes, explain, fmt and breaking as tools of a
Model Context Protocol server over stdin and stdout, for a coding agent's MCP client.
Each tool answers with the JSON envelope `toolkit --json <command>` prints; schema
diagnostics are an answer, usage errors and crashes are tool errors. Paths are read
relative to the directory the server starts in. Needs the `mcp` extra."""

EPILOG = """\
examples:
  toolkit mcp
  claude mcp add toolkit -- toolkit mcp      # register it with an agent's MCP client"""

BREADCRUMBS = ["toolkit check", "toolkit docs --skill"]


def configure(parser: CommandParser) -> None:
    """No flags: the client talks on stdin and stdout."""


def run(args: Namespace, out: Output) -> Result:
    """Serve until the client closes stdin."""
    try:
        import mcp  # noqa: F401 - only to tell a missing extra apart
    except ImportError:
        raise CliError(
            "the MCP SDK is not installed",
            hint='pip install "django-toolkit[mcp]"',
            exit_code=EXIT_USAGE,
        ) from None
    from toolkit_batteries.cli.mcp_server import serve

    serve()
    return Result()

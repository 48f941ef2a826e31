"""The static command table: every top-level command, its module and its one-line summary.

``toolkit --help`` prints from this table without importing any command module (or
argparse), which keeps it fast; a command's own flags live in its module and are loaded
only when that command runs, or when ``--help --agent`` / ``docs`` walk every command.
"""

from __future__ import annotations

__all__ = ["ALIASES", "COMMANDS", "GROUPS", "CommandInfo", "lookup"]


class CommandInfo:
    """One row: ``name`` as typed, ``module`` under ``toolkit_batteries.cli.commands``."""

    __slots__ = ("group", "module", "name", "short")

    def __init__(self, name: str, module: str, group: str, short: str) -> None:
        self.name = name
        self.module = module
        self.group = group
        self.short = short


#: Groups in the order ``--help`` prints them.
GROUPS = ("scaffolding", "inspection", "runtime", "database", "agent")

COMMANDS: tuple[CommandInfo, ...] = (
    CommandInfo("new", "new", "scaffolding", "create a project from the template"),
    CommandInfo("add", "add", "scaffolding", "add a battery (app + settings block) to the project"),
    CommandInfo("generate", "generate", "scaffolding", "generate a module, entity, job, ..."),
    CommandInfo("extract", "extract", "scaffolding", "extract a module into its own project"),
    CommandInfo("compile", "compile", "inspection", "compile schema files with backends"),
    CommandInfo("check", "check", "inspection", "validate schema files; write nothing"),
    CommandInfo("check-boundaries", "check_boundaries", "inspection", "report cross-module refs"),
    CommandInfo("breaking", "breaking", "inspection", "list breaking changes: old -- new"),
    CommandInfo("fmt", "fmt", "inspection", "format schema files (-l list, -w write)"),
    CommandInfo("doctor", "doctor", "inspection", "open every configured service, one row each"),
    CommandInfo("routes", "routes", "inspection", "list the HTTP routes of the schema"),
    CommandInfo("explain", "explain", "inspection", "explain one rpc: Service.Rpc"),
    CommandInfo("graph", "graph", "inspection", "draw entities and services (Mermaid, svg, png)"),
    CommandInfo("config", "config", "inspection", "show the resolved configuration (redacted)"),
    CommandInfo("serve", "serve", "runtime", "serve the project (production server, :8080)"),
    CommandInfo("dev", "dev", "runtime", "serve with reload on schema or code changes"),
    CommandInfo("queue:work", "queue_work", "runtime", "run queued jobs until stopped"),
    CommandInfo("schedule:run", "schedule_run", "runtime", "run the cron scheduler"),
    CommandInfo("outbox:relay", "outbox_relay", "runtime", "relay the outbox; status, dlq, purge"),
    CommandInfo("tinker", "tinker", "runtime", "Django shell with the container (dev only)"),
    CommandInfo("db", "db", "database", "migrate, rollback or seed the database"),
    CommandInfo("docs", "docs", "agent", "write command reference pages or the agent skill"),
    CommandInfo("completion", "completion", "agent", "print a bash, zsh or fish completion script"),
    CommandInfo("mcp", "mcp", "agent", "serve check, compile, routes, ... as MCP tools (stdio)"),
)

#: Other spellings accepted for a command (the separator conventions of the original).
ALIASES = {
    "queue_work": "queue:work",
    "queue-work": "queue:work",
    "schedule_run": "schedule:run",
    "schedule-run": "schedule:run",
    "check:boundaries": "check-boundaries",
    "check_boundaries": "check-boundaries",
    "outbox_relay": "outbox:relay",
    "outbox-relay": "outbox:relay",
}

_BY_NAME = {info.name: info for info in COMMANDS}


def lookup(name: str) -> CommandInfo | None:
    """Return the row for ``name`` (or one of its aliases), or ``None``."""
    return _BY_NAME.get(ALIASES.get(name, name))

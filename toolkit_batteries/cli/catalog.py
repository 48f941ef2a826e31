"""Walk the command parsers: the ``--help --agent`` catalog and the per-command reference.

Everything here is derived from the argparse parsers the commands build, so the catalog,
``toolkit docs --dir`` pages and the skill file can never drift from the real flags.
"""

from __future__ import annotations

import argparse
from importlib import import_module
from types import ModuleType
from typing import Any

from .exitcodes import EXIT_CODES
from .parser import CommandParser
from .table import ALIASES, COMMANDS, CommandInfo

__all__ = [
    "GLOBAL_FLAGS",
    "JSON_MODE",
    "agent_catalog",
    "build_parser",
    "command_module",
    "describe_parser",
]

#: The flags every command accepts (peeled from argv before the command parses its own).
GLOBAL_FLAGS: tuple[dict[str, Any], ...] = (
    {
        "name": "--json",
        "type": "bool",
        "default": False,
        "usage": "print exactly one JSON envelope line on stdout (also TOOLKIT_JSON=1; "
        "--json=false overrides the variable)",
    },
    {
        "name": "--quiet",
        "shorthand": "-q",
        "type": "bool",
        "default": False,
        "usage": "suppress hint footers",
    },
    {"name": "--no-color", "type": "bool", "default": False, "usage": "never colour output"},
    {
        "name": "--help",
        "shorthand": "-h",
        "type": "bool",
        "default": False,
        "usage": "show help (with --agent and no command: this catalog as JSON)",
    },
    {
        "name": "--version",
        "shorthand": "-V",
        "type": "bool",
        "default": False,
        "usage": "print the version and exit",
    },
)

JSON_MODE = (
    "--json (or TOOLKIT_JSON=1) prints one envelope line on stdout: "
    '{"ok", "command", "exitCode", "data"?, "error"?, "hint"?, "breadcrumbs"?}; '
    "compile, check, breaking, explain, doctor, routes, fmt, config show and db emit data; "
    "other commands emit data where they have some and otherwise only ok/error. "
    "Human output and progress are suppressed; diagnostics still go to stderr."
)


def command_module(info: CommandInfo) -> ModuleType:
    """Import the module implementing ``info``."""
    return import_module(f"toolkit_batteries.cli.commands.{info.module}")


def build_parser(info: CommandInfo, module: ModuleType | None = None) -> CommandParser:
    """Build the argparse parser of one top-level command."""
    module = module or command_module(info)
    parser = CommandParser(
        prog=f"toolkit {info.name}",
        description=getattr(module, "DESCRIPTION", None) or info.short,
        epilog=getattr(module, "EPILOG", None),
    )
    module.configure(parser)
    return parser


def _flag_type(action: argparse.Action) -> str:
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        return "bool"
    if isinstance(action, argparse._CountAction):
        return "count"
    if isinstance(action, argparse._AppendAction):
        return "list"
    if action.nargs in ("*", "+", argparse.REMAINDER) or isinstance(action.nargs, int):
        return "list"
    kind = getattr(action.type, "__name__", None) if action.type else None
    # A validating converter (``def port_number(text: str) -> int``) reports its result type.
    returns = getattr(action.type, "__annotations__", {}).get("return") if action.type else None
    if isinstance(returns, type):
        returns = returns.__name__
    known = {"int": "int", "float": "float", "Path": "path"}
    return known.get(kind or "") or known.get(str(returns or ""), "string")


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    return str(value)


def describe_parser(parser: argparse.ArgumentParser, name: str) -> dict[str, Any]:
    """Describe one parser (and its subcommands, recursively) as plain data."""
    flags: list[dict[str, Any]] = []
    positionals: list[dict[str, Any]] = []
    subcommands: list[dict[str, Any]] = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for sub_name, sub_parser in action.choices.items():
                entry = describe_parser(sub_parser, f"{name} {sub_name}")
                entry["short"] = helps.get(sub_name) or ""
                subcommands.append(entry)
            continue
        if action.option_strings:
            longs = [s for s in action.option_strings if s.startswith("--")]
            shorts = [s for s in action.option_strings if not s.startswith("--")]
            flag: dict[str, Any] = {
                "name": (longs or shorts)[0],
                "type": _flag_type(action),
                "default": _jsonable(action.default),
                "required": bool(action.required),
                "usage": action.help or "",
            }
            if longs and shorts:
                flag["shorthand"] = shorts[0]
            if action.choices:
                flag["choices"] = _jsonable(list(action.choices))
            flags.append(flag)
        else:
            positionals.append(
                {
                    "name": action.metavar or action.dest,
                    "nargs": _jsonable(action.nargs) if action.nargs is not None else 1,
                    "required": action.nargs not in ("?", "*"),
                    "usage": action.help or "",
                }
            )
    out: dict[str, Any] = {"name": name, "usage": parser.format_usage().strip()}
    out["flags"] = sorted(flags, key=lambda f: f["name"])
    out["positionals"] = positionals
    if subcommands:
        out["subcommands"] = subcommands
    return out


def agent_catalog() -> dict[str, Any]:
    """Return the ``--help --agent`` object: every command, subcommand and flag."""
    commands = []
    aliases: dict[str, list[str]] = {}
    for alias, target in ALIASES.items():
        aliases.setdefault(target, []).append(alias)
    for info in sorted(COMMANDS, key=lambda row: row.name):
        entry = describe_parser(build_parser(info), info.name)
        entry = {"name": info.name, "short": info.short, "group": info.group, **entry}
        if info.name in aliases:
            entry["aliases"] = sorted(aliases[info.name])
        commands.append(entry)
    return {
        "commands": commands,
        "globalFlags": sorted((dict(flag) for flag in GLOBAL_FLAGS), key=lambda f: f["name"]),
        "exitCodes": [{"code": code, "meaning": meaning} for code, meaning in EXIT_CODES],
        "jsonMode": JSON_MODE,
    }

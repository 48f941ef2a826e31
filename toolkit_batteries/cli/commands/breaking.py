"""``toolkit breaking <old...> -- <new...>``: list what changed and fail on breaking changes.

The two sides are loaded separately (files or directories, recursively), compared module by
module (matched by version and name) and every change is printed, breaking ones marked
``✘``. argparse consumes ``--`` itself, so this command splits the arguments on it in its
own :func:`parse` before argparse sees either side.
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from toolkit_batteries.cli.output import CheckFailedError, Output, Result, UsageError
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.schema_files import fail_on_errors, report

DESCRIPTION = """\
Compare two versions of a schema and list every change; fail (exit 4) when any change
breaks existing clients or data (a removed entity, field, rpc or route, a changed type,
parameters or return type, an optional field made required).

Each side is one or more schema files or directories, separated by `--`.
"""
EPILOG = """\
examples:
  toolkit breaking old/schema -- schema
  toolkit --json breaking v1.toolkit -- v2.toolkit
"""

_USAGE = "usage: toolkit breaking <old...> -- <new...>"


def configure(parser: CommandParser) -> None:
    """Describe the two sides (for help and the catalog; :func:`parse` does the split)."""
    parser.usage = "toolkit breaking [-h] OLD [OLD ...] -- NEW [NEW ...]"
    parser.add_argument(
        "old", nargs="+", metavar="OLD", help="the old schema: files or directories"
    )
    parser.add_argument(
        "new",
        nargs="+",
        metavar="NEW",
        help="the new schema, after `--`: files or directories",
    )


def parse(parser: CommandParser, rest: list[str]) -> Namespace:
    """Split ``rest`` on the first ``--`` into the old and the new side."""
    if "--" not in rest:
        if any(arg in ("-h", "--help") for arg in rest):
            return parser.parse_args(["--help"])
        raise UsageError("missing the `--` between the old and the new schema", hint=_USAGE)
    cut = rest.index("--")
    old, new = rest[:cut], rest[cut + 1 :]
    if any(arg in ("-h", "--help") for arg in old):
        return parser.parse_args(["--help"])
    for arg in (*old, *new):
        if arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown flag {arg!r}", hint=_USAGE)
    if not old or not new:
        side = "old" if not old else "new"
        raise UsageError(f"no {side} schema given", hint=_USAGE)
    return Namespace(old=old, new=new)


def run(args: Namespace, out: Output) -> Result:
    """Compare the two sides; exit 4 when anything breaks."""
    from toolkit_codegen.breaking import compare_paths

    report_ = compare_paths(args.old, args.new)
    problems = [*report_.old.diagnostics, *report_.new.diagnostics]
    report(problems, out)
    fail_on_errors(problems)
    changes = report_.changes
    for change in changes:
        mark = "✘" if change.breaking else " "
        out.line(f"{mark} {change}")
    broken = len(report_.breaking)
    data: dict[str, Any] = {
        "breaking": broken,
        "informational": len(report_.informational),
        "changes": [
            {
                "kind": c.kind,
                "breaking": c.breaking,
                "message": c.message,
                **({"file": c.pos.file, "line": c.pos.line} if c.pos else {}),
            }
            for c in changes
        ],
    }
    if broken:
        raise CheckFailedError(
            f"{broken} breaking change(s) found",
            data=data,
            hint="keep the old shape, or version the API (schema/v2/...)",
        )
    if not changes:
        out.line("no differences found")
    else:
        out.line(f"no breaking changes ({len(changes)} informational)")
    return Result(data=data)

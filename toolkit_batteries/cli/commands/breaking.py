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

Each side is one or more schema files or directories, separated by `--`; or
`--against <git ref>` compares the schema as committed at that ref (a commit, branch or
tag of the git repository holding it) with the working tree's (default: ./schema).
"""
EPILOG = """\
examples:
  toolkit breaking old/schema -- schema
  toolkit --json breaking v1.toolkit -- v2.toolkit
  toolkit breaking --against main            # ./schema as on main vs now
  toolkit breaking --against HEAD~1 schema/app.toolkit
"""

_USAGE = "usage: toolkit breaking <old...> -- <new...> | --against <git ref> [new...]"


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
    parser.add_argument(
        "--against",
        metavar="REF",
        help="compare with the schema as committed at this git ref (then NEW defaults to "
        "./schema and no `--` is written)",
    )


def parse(parser: CommandParser, rest: list[str]) -> Namespace:
    """Split ``rest`` on the first ``--`` into the old and the new side (or ``--against``)."""
    against = [
        i for i, arg in enumerate(rest) if arg == "--against" or arg.startswith("--against=")
    ]
    if against and "--" not in rest:
        at = against[0]
        flag = rest[at]
        if "=" in flag:
            ref, remainder = flag.partition("=")[2], rest[:at] + rest[at + 1 :]
        elif at + 1 < len(rest):
            ref, remainder = rest[at + 1], rest[:at] + rest[at + 2 :]
        else:
            raise UsageError("--against needs a git ref (a commit, branch or tag)", hint=_USAGE)
        for arg in remainder:
            if arg.startswith("-"):
                raise UsageError(f"unknown flag {arg!r}", hint=_USAGE)
        if not ref.strip() or ref.startswith("-"):
            raise UsageError("--against needs a git ref (a commit, branch or tag)", hint=_USAGE)
        return Namespace(old=None, new=remainder or ["schema"], against=ref)
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
    return Namespace(old=old, new=new, against=None)


def run(args: Namespace, out: Output) -> Result:
    """Compare the two sides; exit 4 when anything breaks."""
    import tempfile

    from toolkit_codegen.breaking import compare_paths

    against = getattr(args, "against", None)
    if against is None:
        report_ = compare_paths(args.old, args.new)
        return _report(report_, out)
    with tempfile.TemporaryDirectory(prefix="toolkit-breaking-") as scratch:
        old = _export_at(against, args.new, scratch)
        return _report(compare_paths(old, args.new), out)


def _git(args: list[str], cwd: str) -> str:
    import subprocess

    from toolkit_batteries.cli.output import CliError

    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
        )
    except FileNotFoundError:
        raise CliError("--against needs git, which is not installed") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        raise CliError(f"git {args[0]}: {reason}")
    return done.stdout


def _export_at(ref: str, paths: list[str], scratch: str) -> list[str]:
    """Write the ``.toolkit`` files under ``paths`` as committed at ``ref`` into ``scratch``.

    Return the old side's paths (the same relative layout under ``scratch``). A path the
    commit does not have is an empty old side for it (everything in it is "added").
    """
    from pathlib import Path

    exported: list[str] = []
    for given in paths:
        path = Path(given).resolve()
        anchor = path if path.is_dir() else path.parent
        top = Path(_git(["rev-parse", "--show-toplevel"], str(anchor)).strip())
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], str(top))
        relative = path.relative_to(top).as_posix()
        listed = _git(["ls-tree", "-r", "--name-only", ref, "--", relative], str(top))
        target = Path(scratch) / relative
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        for name in listed.splitlines():
            if not name.endswith(".toolkit"):
                continue
            text = _git(["show", f"{ref}:{name}"], str(top))
            file = Path(scratch) / name
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8")
        exported.append(str(target))
    return exported


def _report(report_: Any, out: Output) -> Result:
    """Print the comparison; exit 4 when anything breaks."""
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

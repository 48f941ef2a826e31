"""``toolkit fmt``: print schema files in the one canonical layout (gofmt-style).

Without ``-w`` it only lists the files that are not canonical and fails (exit 4), which is
what a CI step wants; ``-w`` rewrites them in place. Every file is formatted in memory
before anything is written, so a syntax error in one file leaves every file untouched.
"""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

from toolkit_batteries.cli.output import CheckFailedError, InvalidInputError, Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.schema_files import add_schema_arguments, schema_file_list
from toolkit_batteries.core.files import atomic_write

DESCRIPTION = """\
Format schema files in the canonical layout (two-space indent, one member per line,
attributes and rpc options in a fixed order, comments kept).

By default (and with -l) list the files that would change and exit 4 if there are any;
with -w rewrite them in place. A file with syntax errors is never rewritten (exit 3).
"""
EPILOG = """\
examples:
  toolkit fmt            # list unformatted files under schema/ (exit 4 if any)
  toolkit fmt -w         # rewrite them
  toolkit fmt -l schema/billing
"""


def configure(parser: CommandParser) -> None:
    """Add ``-l`` / ``-w`` and the schema paths."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "-l",
        "--list",
        action="store_true",
        help="list files whose formatting differs (the default); exit 4 if any",
    )
    mode.add_argument(
        "-w", "--write", action="store_true", help="rewrite files in place (atomically)"
    )
    add_schema_arguments(parser)


def run(args: Namespace, out: Output) -> Result:
    """Format every file in memory, then list or write the ones that change."""
    from toolkit_codegen.format import FormatError, format_source

    files = schema_file_list(args.files, out)
    changed: list[tuple[str, Path, str]] = []
    for display, path in files:
        try:
            text = path.read_bytes().decode("utf-8")
            formatted = format_source(text, display)
        except (FormatError, UnicodeDecodeError):
            raise InvalidInputError(
                f"\"{display}\" has syntax errors, run 'toolkit check {display}' for details",
                data={"changed": [], "checked": len(files), "failed": display},
            ) from None
        except OSError as exc:
            raise InvalidInputError(f'cannot read "{display}": {exc.strerror}') from None
        if formatted != text:
            changed.append((display, path, formatted))
    data = {"changed": [display for display, _, _ in changed], "checked": len(files)}
    if not args.write:
        for display, _, _ in changed:
            out.line(display)
        if changed:
            raise CheckFailedError(
                f"{len(changed)} file(s) would be reformatted",
                data=data,
                hint="run `toolkit fmt -w` to rewrite them",
            )
        out.line(f"✔ {len(files)} file(s) already formatted")
        return Result(data=data)
    for display, path, formatted in changed:
        atomic_write(path, formatted)
        out.line(f"✔ {display}")
    if not changed:
        out.line("already formatted")
    return Result(data=data)

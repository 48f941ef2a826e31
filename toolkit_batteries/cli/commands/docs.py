"""``toolkit docs``: reference pages for every command, or the skill file for coding agents.

Both are rendered from the command parsers themselves (:mod:`..catalog`), so they list
exactly the flags the program accepts. The repository keeps the rendered skill at
``skills/toolkit/SKILL.md``; a test renders it again and requires the two to be equal.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..output import CliError, Output, Result
from ..parser import CommandParser, add_dry_run

DESCRIPTION = """\
Write the command reference (one Markdown page per command, plus an index) into --dir,
or, with --skill, the skill file that teaches a coding agent to drive toolkit (to stdout,
or to <dir>/SKILL.md with --dir)."""

EPILOG = """\
examples:
  toolkit docs --dir docs/reference      # docs/reference/toolkit.md, toolkit-compile.md, ...
  toolkit docs --skill                   # print SKILL.md
  toolkit docs --skill --dir skills/toolkit"""


def configure(parser: CommandParser) -> None:
    """Add ``--dir``, ``--skill`` and ``--dry-run``."""
    parser.add_argument("--dir", type=Path, default=None, help="directory to write into")
    parser.add_argument(
        "--skill", action="store_true", help="render the coding-agent skill file (SKILL.md)"
    )
    add_dry_run(parser)


def run(args: argparse.Namespace, out: Output) -> Result:
    """Render the pages (or the skill) and write them, unless dry-running."""
    from ..reference import reference_pages, skill_markdown

    if args.skill:
        pages = {"SKILL.md": skill_markdown()}
        if args.dir is None:
            if args.dry_run:
                raise CliError("--dry-run needs --dir (without it nothing is written anyway)")
            if out.json_mode:
                return Result(data={"files": [], "skill": pages["SKILL.md"]})
            out.stdout.write(pages["SKILL.md"])
            return Result(data={"files": []})
    else:
        if args.dir is None:
            raise CliError(
                "--dir is required (or pass --skill to print the skill file)", exit_code=2
            )
        pages = reference_pages()
    return _write_pages(args.dir, pages, args.dry_run, out)


def _write_pages(directory: Path, pages: dict[str, str], dry_run: bool, out: Output) -> Result:
    if directory.exists() and not directory.is_dir():
        raise CliError(f"{directory} exists and is not a directory")
    written: list[str] = []
    for name, text in sorted(pages.items()):
        target = directory / name
        written.append(str(target))
        if dry_run:
            out.line(f"dry run: would write {target}")
            continue
        directory.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        out.line(f"✔ {target}")
    data: dict[str, Any] = {"dir": str(directory), "files": written, "dryRun": dry_run}
    return Result(data=data)

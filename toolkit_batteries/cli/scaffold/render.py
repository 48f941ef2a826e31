"""Render ``project_template/`` the way ``django-admin startproject --template`` does.

The template ships inside the package (``toolkit_batteries/project_template``, a symlink in
a checkout), so ``toolkit new`` works from a wheel. Rendering runs Django's own
``startproject`` in this process, into a fresh temporary directory: callers then edit the
rendered files (``--batteries``), list them (``--dry-run``) or copy them into the target
(:func:`copy_tree`), so a failure half-way never leaves a half-written project behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from toolkit_batteries.core.files import atomic_write

from ..output import CliError, Output

__all__ = [
    "EXTENSIONS",
    "check_target",
    "copy_tree",
    "deliver",
    "list_files",
    "render_project",
    "template_dir",
]

#: The file extensions rendered as Django templates (as ``--extension=py,toolkit,md``).
EXTENSIONS = ("py", "toolkit", "md")


def template_dir() -> Path:
    """Return the project template's directory inside the installed package."""
    import toolkit_batteries

    return Path(toolkit_batteries.__file__).resolve().parent / "project_template"


def render_project(package: str, dest: Path) -> list[str]:
    """Render the template for ``package`` into the existing empty ``dest``; list its files."""
    from django.conf import settings
    from django.core.management import call_command
    from django.core.management.base import CommandError
    from django.core.management.commands.startproject import Command

    if not settings.configured:
        settings.configure()
    try:
        call_command(
            Command(),
            package,
            str(dest),
            template=str(template_dir()),
            extensions=list(EXTENSIONS),
            verbosity=0,
        )
    except CommandError as exc:
        raise CliError(f"cannot render the project template: {exc}") from None
    return list_files(dest)


def list_files(root: Path) -> list[str]:
    """Return every file under ``root``, relative and sorted (byte-code caches left out)."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def check_target(target: Path, shown: str, force: bool) -> None:
    """Refuse a target that is a file, or a non-empty directory without ``--force`` (exit 1)."""
    if target.exists() and not target.is_dir():
        raise CliError(f"{shown} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise CliError(
            f"directory {shown} is not empty; nothing was written",
            hint="pass --force to write the template's files into it (other files are kept)",
        )


def deliver(
    staging: Path, target: Path, files: list[str], summary: str, out: Output, *, dry_run: bool
) -> None:
    """Copy the staged project into ``target`` and list it; under ``--dry-run`` only list.

    ``toolkit new`` and ``toolkit extract`` both end so: one wording for what was (or
    would be) created, and nothing written before the whole project is staged.
    """
    if dry_run:
        out.line(f"dry run: would create {summary}")
        for rel in files:
            out.line(f"  would write {rel}")
        return
    target.mkdir(parents=True, exist_ok=True)
    copy_tree(staging, target)
    out.line(f"created {summary}")
    for rel in files:
        out.line(f"  {rel}")


def copy_tree(source: Path, target: Path) -> list[str]:
    """Copy every file of ``source`` into ``target`` (overwriting those files only).

    ``--force`` writes into a directory someone else may have prepared: a symbolic link
    planted at ``manage.py`` or ``api/`` would make the copy write wherever it points. So
    every path is checked before anything is written (a refusal writes nothing), and each
    file is replaced (a new file renamed over the name), never written through.
    """
    files = list_files(source)
    for rel in files:
        _refuse_links(target, rel)
    for rel in files:
        destination = target / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        _refuse_links(target, rel)  # again, just before the write
        atomic_write(destination, (source / rel).read_bytes())
        shutil.copymode(source / rel, destination)
    return files


def _refuse_links(target: Path, rel: str) -> None:
    """Fail when ``rel`` under ``target`` is, or passes through, a link or a directory."""
    current = target
    for part in Path(rel).parts:
        current = current / part
        if current.is_symlink():
            shown = current.relative_to(target).as_posix()
            raise CliError(
                f"cannot write {rel}: {shown} is a symbolic link; nothing was written through it",
                hint="remove the link (or choose another directory) and run again",
            )
    if current.is_dir():
        raise CliError(f"cannot write {rel}: a directory is in the way")

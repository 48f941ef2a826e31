"""Find the Django project a command runs in, set Django up, and run its management commands.

A project is the nearest directory, from the current one upwards, holding ``manage.py``;
its settings module is read from that file (``DJANGO_SETTINGS_MODULE`` in the environment
wins). Runtime commands delegate to management commands through :func:`call_management`,
so ``toolkit queue:work`` and ``python manage.py queue_work`` are the same code.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .exitcodes import EXIT_RUNTIME
from .output import CliError, InvalidInputError, Output

__all__ = [
    "NotInProjectError",
    "Project",
    "call_management",
    "find_project",
    "require_project",
    "setup_django",
]

_SETTINGS_LINE = re.compile(r"""DJANGO_SETTINGS_MODULE['"]\s*,\s*['"]([A-Za-z_][\w.]*)['"]""")


class NotInProjectError(CliError):
    """The command needs a project and none was found (exit 1)."""


@dataclass(frozen=True)
class Project:
    """A toolkit (Django) project on disk."""

    root: Path
    settings_module: str

    @property
    def schema_dir(self) -> Path:
        """The project's schema directory (``<root>/schema``)."""
        return self.root / "schema"

    @property
    def manage_py(self) -> Path:
        """The project's ``manage.py``."""
        return self.root / "manage.py"


def find_project(start: Path | None = None) -> Project | None:
    """Return the project around ``start`` (default: the current directory), or ``None``."""
    here = (start or Path.cwd()).resolve()
    env_settings = os.environ.get("DJANGO_SETTINGS_MODULE", "").strip()
    for directory in (here, *here.parents):
        manage = directory / "manage.py"
        if manage.is_file():
            module = env_settings or _settings_from(manage)
            if module:
                return Project(directory, module)
    if env_settings:
        return Project(here, env_settings)
    return None


def _settings_from(manage: Path) -> str | None:
    try:
        match = _SETTINGS_LINE.search(manage.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return match.group(1) if match else None


def require_project(command: str) -> Project:
    """Return the current project or fail with a message saying how to get one."""
    project = find_project()
    if project is None:
        raise NotInProjectError(
            f"toolkit {command}: not inside a project (no manage.py here or above, "
            "and DJANGO_SETTINGS_MODULE is unset)",
            hint="cd into a project, or create one with `toolkit new <name> --dir <dir>`",
        )
    return project


def setup_django(project: Project) -> None:
    """Import the project's settings and run ``django.setup()`` (once per process).

    Invalid configuration (an unknown service, a bad option) becomes exit 3 with the
    toolkit's own message, which names the service and field and never the value.
    """
    root = str(project.root)
    if root not in sys.path:
        sys.path.insert(0, root)
    os.environ["DJANGO_SETTINGS_MODULE"] = project.settings_module
    import django
    from django.core.exceptions import ImproperlyConfigured

    try:
        django.setup()
    except ImproperlyConfigured as exc:
        raise InvalidInputError(f"invalid configuration: {exc}") from None
    except ModuleNotFoundError as exc:
        raise InvalidInputError(
            f"cannot import the project's settings ({project.settings_module}): {exc}"
        ) from None


@contextmanager
def _captured(out: Output) -> Iterator[io.StringIO | None]:
    """Under ``--json`` keep a management command's prints off stdout (the envelope's)."""
    if not out.json_mode:
        yield None
        return
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        yield buffer


def call_management(name: Any, *args: str, out: Output, **options: Any) -> str:
    """Run management command ``name`` (or a command instance) here; return --json output.

    A ``CommandError`` becomes a :class:`CliError` with the command's ``returncode``
    (the toolkit's commands use the CLI contract's codes), so the exit code survives.
    """
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with _captured(out) as buffer:
        try:
            if buffer is not None:
                options.setdefault("stdout", buffer)
            call_command(name, *args, **options)
        except CommandError as exc:
            code = getattr(exc, "returncode", EXIT_RUNTIME) or EXIT_RUNTIME
            raise CliError(str(exc), exit_code=code) from None
        except SystemExit as exc:  # commands that exit directly (runserver's reloader)
            code = exc.code if isinstance(exc.code, int) else EXIT_RUNTIME
            if code:
                shown = name if isinstance(name, str) else type(name).__module__.rsplit(".", 1)[-1]
                raise CliError(f"{shown} exited with status {code}", exit_code=code) from None
    return buffer.getvalue() if buffer is not None else ""

"""``manage.py tinker``: Django's shell with the toolkit container loaded (development only).

::

    python manage.py tinker                               # interactive (on a terminal)
    python manage.py tinker -c "print(services.cache())"  # run code, exit
    echo "print(User.objects.count())" | python manage.py tinker

The namespace holds every model (Django's automatic shell imports), ``services`` (the
settings-aware registry), ``container`` (its container) and ``settings``. Then
``<BASE_DIR>/tinker.py`` runs in that namespace when it exists (``toolkit generate
tinker`` writes one), unless ``--no-startup``. Every start prints a warning on stderr:
tinker evaluates arbitrary Python against live services. With ``-c``, or standard input
that is not a terminal, the code runs and the command exits (1 if it raised); it never
waits at a prompt unless standard input is a terminal.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.core.management.commands.shell import Command as ShellCommand

__all__ = ["STARTUP_FILE", "WARNING", "Command"]

WARNING = (
    "WARNING: toolkit tinker is development-only: it evaluates arbitrary Python against a "
    "live container, so run it against a development database only."
)
#: The project file executed in the namespace before anything else.
STARTUP_FILE = "tinker.py"


def startup_file() -> Path:
    """Return ``<BASE_DIR>/tinker.py`` (the current directory without ``BASE_DIR``)."""
    from django.conf import settings

    base = getattr(settings, "BASE_DIR", None)
    return Path(base or Path.cwd()) / STARTUP_FILE


class Command(ShellCommand):
    """The Django shell, with services, settings, models and the project's tinker.py."""

    help = (
        "Django shell with the toolkit container loaded (services, container, settings and "
        "every model); runs <project>/tinker.py first. Development only."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Django's shell flags; ``--no-startup`` also skips ``tinker.py``."""
        super().add_arguments(parser)
        for action in parser._actions:
            if action.dest == "no_startup":
                action.help = "skip <project>/tinker.py, PYTHONSTARTUP and ~/.pythonrc.py"

    def get_namespace(self, **options: Any) -> dict[str, Any]:
        """Models (unless ``--no-imports``), the registry, settings, then ``tinker.py``."""
        from django.conf import settings

        from toolkit_batteries import services

        namespace = dict(super().get_namespace(**options))
        namespace.update(services=services, container=services.container(), settings=settings)
        if not options.get("no_startup"):
            self._run_startup(namespace)
        return namespace

    def _run_startup(self, namespace: dict[str, Any]) -> None:
        path = startup_file()
        if not path.is_file():
            return
        try:
            code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
            exec(code, namespace)
        except Exception:  # like PYTHONSTARTUP: report, then carry on
            traceback.print_exc(file=sys.stderr)
            self.stderr.write(f"tinker: {path.name} raised; continuing without the rest of it")

    def handle(self, **options: Any) -> None:
        """Warn, then run ``-c``, standard input, or the interactive shell."""
        self.stderr.write(WARNING, style_func=None)
        self.stderr.flush()
        if options["command"] is not None:
            self._execute(options["command"], "<tinker -c>", options)
        elif not sys.stdin.isatty():
            self._execute(sys.stdin.read(), "<stdin>", options)
        else:
            super().handle(**options)

    def _execute(self, source: str, filename: str, options: dict[str, Any]) -> None:
        namespace = self.get_namespace(**{**options, "verbosity": 0})
        try:
            code = compile(source, filename, "exec")
            exec(code, namespace)
        except SystemExit:
            raise
        except BaseException as exc:
            traceback.print_exc(file=sys.stderr)
            raise CommandError(
                f"the code raised {type(exc).__name__}: {exc}", returncode=1
            ) from None
        finally:
            sys.stdout.flush()

"""``manage.py dev``: the development server, recompiling the schema as it changes.

::

    python manage.py dev                       # 127.0.0.1:8000   (toolkit dev is the same)
    python manage.py dev --host 0.0.0.0 --port 8001

1. The schema is compiled once (as ``compile_schema``). The compile is advisory: on a
   failure the diagnostics are printed and the server starts anyway.
2. Django's ``runserver`` starts with its autoreloader: the first process only restarts
   the second, which serves and watches the project's Python code.
3. In that serving process a thread polls ``schema/**/*.toolkit`` (every 250 ms; a change
   must settle for 250 ms before it counts). On a change it recompiles: success writes
   the generated files and restarts the server; failure prints the diagnostics and leaves
   the running server as it was.

4. Migrations are applied as they appear: once at start (after the first compile), and
   after every recompile that writes a migration, before the restart, so a new entity's
   table exists when its routes first answer. ``migrate`` runs in a fresh interpreter
   (``manage.py migrate``), which sees the new code. ``--no-migrate`` turns this off.

Development only: runserver is not a production server (use ``serve``).
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from toolkit_batteries.devserver import RELOADER_CHILD, add_flags, run_dev


class Command(BaseCommand):
    """Run the development server with schema recompiles."""

    help = (
        "Development server: compile the schema, run runserver with its reloader, and "
        "recompile on schema/**/*.toolkit changes (restarting on success)."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Add ``--host``, ``--port`` and ``--no-migrate``."""
        add_flags(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        """Run until Ctrl-C or SIGTERM."""

        def say(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()

        def err(line: str) -> None:
            self.stderr.write(line, style_func=None)
            self.stderr.flush()

        try:
            run_dev(
                host=options["host"],
                port=options["port"],
                say=say,
                err=err,
                apply=options["migrate"],
            )
        except SystemExit as exc:
            if os.environ.get(RELOADER_CHILD) == "true" or exc.code in (0, None):
                raise
            raise CommandError(f"the development server exited with status {exc.code}") from None

"""``manage.py dev``: the development server, recompiling the schema as it changes.

::

    python manage.py dev                       # 127.0.0.1:8000   (toolkit dev is the same)
    python manage.py dev --host 0.0.0.0 --port 8001 --no-migrate

What it does (the first compile, the reloader, the schema watcher, migrations as they
appear) is described once, in :mod:`toolkit_batteries.devserver`, which this command and
``toolkit dev`` both run. Development only: runserver is not a production server (use
``serve``).
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import CommandError

from toolkit_batteries.core.commands import RunnerCommand
from toolkit_batteries.devserver import RELOADER_CHILD, add_flags, run_dev


class Command(RunnerCommand):
    """Run the development server with schema recompiles."""

    help = (
        "Development server: compile the schema, run runserver with its reloader, and "
        "recompile on schema/**/*.toolkit changes (restarting on success)."
    )
    flags = add_flags

    def handle(self, *args: Any, **options: Any) -> None:
        """Run until Ctrl-C or SIGTERM."""
        try:
            run_dev(
                host=options["host"],
                port=options["port"],
                say=self.say,
                err=self.note,
                apply=options["migrate"],
            )
        except SystemExit as exc:
            if os.environ.get(RELOADER_CHILD) == "true" or exc.code in (0, None):
                raise
            raise CommandError(f"the development server exited with status {exc.code}") from None

"""``manage.py serve``: the project on gunicorn, in this process (``toolkit serve`` too).

::

    python manage.py serve                          # 0.0.0.0:8080
    python manage.py serve --host 127.0.0.1 --port 9000 --workers 4 --reload --asgi

The behaviour (gunicorn's configuration file, the preflight checks, graceful stops, the
access log) is described once, in :mod:`toolkit_batteries.serving`, which this command and
``toolkit serve`` both run.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.commands import RunnerCommand, exit_codes
from toolkit_batteries.serving import ServeError, add_flags, project_name, project_root, serve


class Command(RunnerCommand):
    """Serve the project with gunicorn."""

    help = "Serve the project with gunicorn (0.0.0.0:8080); SIGTERM or Ctrl-C stops it."
    flags = add_flags

    def handle(self, *args: Any, **options: Any) -> None:
        """Run gunicorn until stopped (its lines on stderr: stdout stays free for --json)."""
        with exit_codes(ServeError):
            serve(
                root=project_root(),
                project=project_name(),
                host=options["host"],
                port=options["port"],
                workers=options["workers"],
                reload=options["reload"],
                asgi=options["asgi"],
                say=self.note,
            )

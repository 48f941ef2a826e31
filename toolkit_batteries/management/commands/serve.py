"""``manage.py serve``: the project on gunicorn, in this process (``toolkit serve`` too).

::

    python manage.py serve                          # 0.0.0.0:8080
    python manage.py serve --host 127.0.0.1 --port 9000 --workers 4
    python manage.py serve --reload                 # restart workers on code changes
    python manage.py serve --asgi                   # the ASGI application on uvicorn workers

gunicorn runs through its ``BaseApplication`` API (no shell, no second interpreter) on
``settings.WSGI_APPLICATION``; with ``--asgi``, on ``settings.ASGI_APPLICATION`` (or the
project's ``asgi.application``) in uvicorn workers (the ``asgi`` extra). When
``<BASE_DIR>/gunicorn.conf.py`` exists (``toolkit generate server`` writes one) it is
gunicorn's configuration (its ``wsgi_app``, when set, wins over the setting, except under
``--asgi``), and ``--host``/``--port``/``--workers`` override it only when
given. SIGTERM or SIGINT stops gracefully: workers finish their requests and the command
exits 0. Before gunicorn starts, Django's system checks run (:func:`preflight`): errors
refuse to start, and outside development so does the development ``SECRET_KEY``. The
access log is on by default and, like gunicorn's ``-`` for it, written to
stderr (stdout stays free for ``--json``) unless the file sets a ``logger_class``; its
lines leave out query strings (:data:`ACCESS_LOG_FORMAT`) unless the file sets a format;
gunicorn's control socket (a fixed path per user in gunicorn 24+) is disabled unless
configured.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from toolkit_batteries.serving import ServeError, add_flags, project_name, project_root, serve


class Command(BaseCommand):
    """Serve the project with gunicorn."""

    help = "Serve the project with gunicorn (0.0.0.0:8080); SIGTERM or Ctrl-C stops it."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Add ``--host``, ``--port``, ``--workers``, ``--reload`` and ``--asgi``."""
        add_flags(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        """Run gunicorn until stopped."""

        def say(line: str) -> None:
            self.stderr.write(line, style_func=None)
            self.stderr.flush()

        try:
            serve(
                root=project_root(),
                project=project_name(),
                host=options["host"],
                port=options["port"],
                workers=options["workers"],
                reload=options["reload"],
                asgi=options["asgi"],
                say=say,
            )
        except ServeError as exc:
            raise CommandError(str(exc), returncode=exc.exit_code) from None

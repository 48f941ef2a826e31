"""``toolkit serve``: the project on gunicorn, 0.0.0.0:8080 by default.

The same code as ``python manage.py serve``
(:mod:`toolkit_batteries.serving`): gunicorn runs in this process on
``settings.WSGI_APPLICATION``, configured by ``<project>/gunicorn.conf.py`` when it
exists; SIGTERM or SIGINT stops it gracefully and the command exits 0.
"""

from __future__ import annotations

from argparse import Namespace

from toolkit_batteries.cli.output import CliError, Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.project import require_project, setup_django

DESCRIPTION = """\
Serve the project with gunicorn (the `serve` extra), in this process, on the WSGI
application named by settings.WSGI_APPLICATION. Listens on 0.0.0.0:8080 unless
<project>/gunicorn.conf.py binds elsewhere; --host and --port win when given.
--asgi serves settings.ASGI_APPLICATION on uvicorn workers instead (the `asgi` extra).
SIGTERM or Ctrl-C stops it gracefully (exit 0). Also: python manage.py serve."""

EPILOG = """\
examples:
  toolkit serve
  toolkit serve --host 127.0.0.1 --port 9000 --workers 4
  toolkit serve --asgi"""

BREADCRUMBS = ["toolkit doctor", "toolkit routes"]


def configure(parser: CommandParser) -> None:
    """Add the flags shared with ``manage.py serve`` (``--host``, ``--port``, ``--asgi``, ...)."""
    from toolkit_batteries.serving import add_flags

    add_flags(parser)


def run(args: Namespace, out: Output) -> Result:
    """Find the project, set Django up and run gunicorn until a signal stops it."""
    project = require_project("serve")
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        raise CliError(
            'gunicorn is not installed (the "serve" extra)',
            hint='pip install "django-toolkit[serve]"',
        ) from None
    setup_django(project)
    from toolkit_batteries.serving import ServeError, project_name, serve

    name = project_name()
    try:
        serve(
            root=project.root,
            project=name,
            host=args.host,
            port=args.port,
            workers=args.workers,
            reload=args.reload,
            asgi=args.asgi,
            say=out.err,
        )
    except ServeError as exc:
        raise CliError(str(exc), exit_code=exc.exit_code, hint=exc.hint) from None
    return Result(data={"project": name, "stopped": True})

"""``toolkit dev``: the development server, recompiling the schema as it changes.

The same code as ``python manage.py dev``
(:mod:`toolkit_batteries.devserver`): an advisory first compile, Django's
``runserver`` with its autoreloader, and in the serving process a thread that recompiles
``schema/**/*.toolkit`` on change (success restarts the server, failure keeps it).
"""

from __future__ import annotations

import os
import sys
from argparse import Namespace
from collections.abc import Iterator
from contextlib import contextmanager

from toolkit_batteries.cli.output import CliError, Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.project import require_project, setup_django

DESCRIPTION = """\
Run the development server (Django's runserver with its autoreloader) on
127.0.0.1:8000. The schema is compiled first (advisory: on errors the diagnostics are
printed and the server starts anyway); then schema/**/*.toolkit is watched: a change that
compiles writes the generated files and restarts the server, one that fails prints the
diagnostics and leaves the server running. Migrations are applied at start and after a
compile that writes one (--no-migrate to skip). Python code changes restart it as
runserver does. Sets TOOLKIT_ENV=development when unset. Development only: use `toolkit serve` in
production. Also: python manage.py dev."""

EPILOG = """\
examples:
  toolkit dev
  toolkit dev --port 8001"""

BREADCRUMBS = ["toolkit serve", "toolkit check"]


def configure(parser: CommandParser) -> None:
    """Add ``--host``, ``--port`` and ``--no-migrate`` (shared with ``manage.py dev``)."""
    from toolkit_batteries.devserver import add_flags

    add_flags(parser)


@contextmanager
def _stdout_on_stderr(active: bool) -> Iterator[None]:
    """Under ``--json``, send everything written to fd 1 (runserver's child too) to fd 2.

    The envelope is the only thing stdout may carry, and runserver's banner is printed
    by the child process the reloader starts, which inherits the file descriptor.
    """
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run(args: Namespace, out: Output) -> Result:
    """Run the development server until Ctrl-C or SIGTERM."""
    project = require_project("dev")
    os.environ.setdefault("TOOLKIT_ENV", "development")
    setup_django(project)
    from toolkit_batteries.devserver import RELOADER_CHILD, run_dev

    try:
        with _stdout_on_stderr(out.json_mode):
            run_dev(host=args.host, port=args.port, say=out.line, err=out.err, apply=args.migrate)
        if os.environ.get(RELOADER_CHILD) == "true":
            raise SystemExit(0)  # the serving process stopped: no envelope of its own
    except SystemExit as exc:
        if os.environ.get(RELOADER_CHILD) == "true":
            raise  # the serving process: status 3 asks the first process to restart it
        if exc.code not in (0, None):
            raise CliError(
                f"the development server exited with status {exc.code}",
                hint="is the port already in use? try --port",
            ) from None
    return Result(data={"host": args.host, "port": args.port, "stopped": True})

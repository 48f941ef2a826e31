"""``toolkit doctor``: open every configured service and say which ones work.

Rows: first ``config`` (the configuration loads and validates), then one per service
instance that the project configures (``settings.TOOLKIT`` or the environment) or installs
(``toolkit_batteries.<service>`` in ``INSTALLED_APPS``), or that ``--service`` names.
Each is opened through the container accessor and then probed (``ping()`` where the
service has one, else a round trip on every pool or client it borrowed), on a worker
thread that is abandoned after ``--timeout`` seconds. A failing row never stops the
others and, as in the original, does not fail the command unless ``--strict``. Messages
pass through :func:`~toolkit_batteries.core.redaction.redact_string`; option values are
never printed. Outside a project the configuration is the built-in defaults plus the
environment. ``python manage.py doctor`` is the same check: both call
:mod:`toolkit_batteries.core.doctor`.
"""

from __future__ import annotations

import argparse
from typing import Any

from toolkit_batteries.core.doctor import (
    DoctorError,
    Row,
    Setup,
    add_doctor_flags,
    close_container,
    env_services,
    setup_from_django,
)

from ..output import CheckFailedError, CliError, InvalidInputError, Output, Result, UsageError
from ..parser import CommandParser

DESCRIPTION = """\
Open every configured or installed service (each instance) and report one row each:
✔ or ✘ with the (redacted) error. Exits 0 even when rows fail unless --strict; a
configuration that does not load exits 3."""

EPILOG = """\
examples:
  toolkit doctor
  toolkit doctor --strict
  toolkit doctor --service cache --service db
  toolkit doctor --deploy            # plus the process topology and shared state"""

BREADCRUMBS = ["toolkit config show"]


def configure(parser: CommandParser) -> None:
    """Add ``--strict``, ``--service`` and ``--timeout`` (shared with ``manage.py doctor``)."""
    add_doctor_flags(parser)


def clear_progress(out: Output) -> None:
    """Erase the progress line (terminal only) so the next row prints on a clean line."""
    if out.interactive:
        out.stderr.write("\r\x1b[2K")
        out.stderr.flush()


def prepare() -> Setup:
    """Load the configuration the current directory sees (exit 3 when it does not load)."""
    from ..project import find_project, setup_django

    project = find_project()
    from toolkit_batteries.core.errors import ConfigurationError

    if project is None:
        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        try:
            config = Config.load(None)
        except ConfigurationError as exc:
            raise InvalidInputError(f"invalid configuration: {exc}") from None
        return Setup(Container(config), env_services(), set(), False, "defaults + environment")
    setup_django(project)
    try:
        return setup_from_django(f"{project.settings_module} + environment")
    except DoctorError as exc:
        raise InvalidInputError(str(exc)) from None


def run(args: argparse.Namespace, out: Output) -> Result:
    """Check the services and print one row each, then the summary."""
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    setup = prepare()
    try:
        _rows, data = check(setup, args.service, args.timeout, out, args.deploy)
    finally:
        close_container(setup.container, via_registry=setup.via_registry, warn=out.err)
    failed = data["failed"]
    if args.strict and failed:
        total = data["ok"] + failed
        raise CheckFailedError(f"{failed} of {total} services failed (--strict)", data=data)
    return Result(data=data)


def check(
    setup: Setup, wanted: list[str] | None, timeout: float, out: Output, deploy: bool = False
) -> tuple[list[Row], dict[str, Any]]:
    """Run every row through the shared doctor, printing to ``out`` as it goes."""
    from toolkit_batteries.core.doctor import check as run_doctor

    try:
        return run_doctor(
            setup,
            wanted,
            timeout,
            out.line,
            progress=out.progress,
            clear=lambda: clear_progress(out),
            deploy=deploy,
        )
    except DoctorError as exc:
        error = UsageError if exc.exit_code == 2 else CliError
        raise error(str(exc), exit_code=exc.exit_code) from None

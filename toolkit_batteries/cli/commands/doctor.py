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
environment. ``python manage.py doctor`` is the same check.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..output import CheckFailedError, InvalidInputError, Output, Result, UsageError
from ..parser import CommandParser

DESCRIPTION = """\
Open every configured or installed service (each instance) and report one row each:
✔, ✘ with the (redacted) error, or a dash for a battery not available in this release. Exits 0
even when rows fail unless --strict; a configuration that does not load exits 3."""

EPILOG = """\
examples:
  toolkit doctor
  toolkit doctor --strict
  toolkit doctor --service cache --service db"""

BREADCRUMBS = ["toolkit config show"]

#: Seconds each service may take to open and answer.
OPEN_TIMEOUT = 5.0
#: Seconds the container may take to close at the end.
CLOSE_TIMEOUT = 5.0
NOT_AVAILABLE = "not available in this release"
#: The mark of a battery without adapters in this release (an en dash).
DASH = "\u2013"


def configure(parser: CommandParser) -> None:
    """Add ``--strict``, ``--service`` and ``--timeout``."""
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 4 when any service fails (default: report and exit 0)",
    )
    parser.add_argument(
        "--service",
        action="append",
        default=None,
        metavar="NAME",
        help="check only this service (repeatable); it is checked even if not configured",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=OPEN_TIMEOUT,
        help=f"seconds each service may take to open and answer (default {OPEN_TIMEOUT:g})",
    )


@dataclass(slots=True)
class Row:
    """One line of the report."""

    service: str
    instance: str
    adapter: str
    ok: bool
    error: str = ""
    skipped: bool = False

    @property
    def label(self) -> str:
        """Return ``service`` or ``service/instance``."""
        return (
            self.service if self.instance in ("", "default") else f"{self.service}/{self.instance}"
        )

    def as_data(self) -> dict[str, Any]:
        """Return the row for the ``--json`` envelope."""
        data: dict[str, Any] = {
            "service": self.service,
            "instance": self.instance,
            "adapter": self.adapter,
            "ok": self.ok,
        }
        if self.error:
            data["error"] = self.error
        if self.skipped:
            data["skipped"] = True
        return data


def _message(exc: BaseException) -> str:
    """Return one redacted line describing ``exc``."""
    from toolkit_batteries.core.errors import ToolkitError
    from toolkit_batteries.core.redaction import redact_string

    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if not isinstance(exc, ToolkitError):
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return redact_string(text)


def check_one(container: Any, service: str, instance: str) -> None:
    """Open ``service``/``instance`` and prove it answers; raise what went wrong."""
    from toolkit_batteries.core.probe import probe

    probe(container, service, instance)


def selected_services(
    config: Any, configured: Iterable[str], installed: Iterable[str], wanted: list[str] | None
) -> list[str]:
    """Return the services to check, in catalog (alphabetical) order."""
    from toolkit_batteries.core.catalog import SERVICES
    from toolkit_batteries.core.errors import did_you_mean

    if wanted:
        chosen: list[str] = []
        folded = {name.replace("_", ""): name for name in SERVICES}
        for name in wanted:
            canonical = folded.get(name.strip().lower().replace("_", ""))
            if canonical is None:
                raise UsageError(f"unknown service {name!r}{did_you_mean(name, SERVICES)}")
            chosen.append(canonical)
        return sorted(set(chosen))
    pool = set(configured) | set(installed)
    return sorted(name for name in SERVICES if name in pool)


def run_checks(
    container: Any,
    services: list[str],
    *,
    timeout: float = OPEN_TIMEOUT,
    on_start: Callable[[int, int, str], None] | None = None,
    on_row: Callable[[int, int, Row], None] | None = None,
) -> list[Row]:
    """Check every instance of ``services``; return one row per instance."""
    from toolkit_batteries.core.loading import adapter_table, resolve_adapter
    from toolkit_batteries.core.probe import bounded

    config = container.config
    plan = [(service, instance) for service in services for instance in config.instances(service)]
    rows: list[Row] = []
    for index, (service, instance) in enumerate(plan, start=1):
        if on_start is not None:
            on_start(
                index, len(plan), service if instance == "default" else f"{service}/{instance}"
            )
        adapter = config.service(service, instance).adapter
        if not adapter_table(service).adapters:
            row = Row(service, instance, DASH, ok=True, skipped=True)
        else:
            with contextlib.suppress(Exception):  # the open below reports it properly
                adapter = resolve_adapter(service, adapter)[0]
            error = bounded(
                lambda s=service, i=instance: check_one(container, s, i), timeout, "toolkit-doctor"
            )
            row = Row(service, instance, adapter, ok=error is None)
            if error is not None:
                row.error = _message(error)
        rows.append(row)
        if on_row is not None:
            on_row(index, len(plan), row)
    return rows


def clear_progress(out: Output) -> None:
    """Erase the progress line (terminal only) so the next row prints on a clean line."""
    if out.interactive:
        out.stderr.write("\r\x1b[2K")
        out.stderr.flush()


def format_row(row: Row, width: int, adapter_width: int) -> str:
    """Return one padded text row."""
    if row.skipped:
        return f"{row.label.ljust(width)}  {DASH.ljust(adapter_width)}  {DASH} {NOT_AVAILABLE}"
    mark = "✔" if row.ok else f"✘ {row.error}"
    return f"{row.label.ljust(width)}  {row.adapter.ljust(adapter_width)}  {mark}"


def summary(rows: list[Row]) -> tuple[int, int, int, str]:
    """Return (ok, failed, skipped, the summary line)."""
    ok = sum(1 for r in rows if r.ok and not r.skipped)
    failed = sum(1 for r in rows if not r.ok)
    skipped = sum(1 for r in rows if r.skipped)
    line = f"All {ok} services OK" if not failed else f"Summary: {ok} OK, {failed} FAIL"
    if skipped:
        line += f" ({skipped} not available in this release, not counted as failures)"
    return ok, failed, skipped, line


def close_container(container: Any, *, via_registry: bool, warn: Callable[[str], None]) -> None:
    """Close what doctor opened, within :data:`CLOSE_TIMEOUT` seconds; warn on failures."""
    deadline = time.monotonic() + CLOSE_TIMEOUT
    try:
        if via_registry:
            from toolkit_batteries import services

            services.close(deadline)
        else:
            container.close(deadline)
    except ExceptionGroup as group:
        for error in group.exceptions:
            warn(f"warning: closing: {_message(error)}")


@dataclass(slots=True)
class Setup:
    """The container doctor opens services from, and which services to check."""

    container: Any
    configured: set[str]
    installed: set[str]
    via_registry: bool
    source: str


def _env_services() -> set[str]:
    from toolkit_batteries.core.env import read_environ

    return set(read_environ(os.environ).services)


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
        return Setup(Container(config), _env_services(), set(), False, "defaults + environment")
    setup_django(project)
    return setup_from_django(f"{project.settings_module} + environment")


def setup_from_django(source: str) -> Setup:
    """Build the setup from the configured Django project (also ``manage.py doctor``)."""
    from django.apps import apps
    from django.conf import settings

    from toolkit_batteries import services
    from toolkit_batteries.core.catalog import SERVICES
    from toolkit_batteries.core.errors import ConfigurationError

    try:
        container = services.container()
    except ConfigurationError as exc:
        raise InvalidInputError(f"invalid configuration: {exc}") from None
    toolkit = getattr(settings, "TOOLKIT", None) or {}
    folded = {name.replace("_", ""): name for name in SERVICES}
    configured = {
        folded[key.lower().replace("_", "")]
        for key in toolkit
        if isinstance(key, str) and key.lower().replace("_", "") in folded
    } | _env_services()
    installed = {
        config.name.rpartition(".")[2]
        for config in apps.get_app_configs()
        if config.name.startswith("toolkit_batteries.")
        and config.name.rpartition(".")[2] in SERVICES
    }
    return Setup(container, configured, installed, True, source)


def run(args: argparse.Namespace, out: Output) -> Result:
    """Check the services and print one row each, then the summary."""
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    setup = prepare()
    try:
        _rows, data = check(setup, args.service, args.timeout, out)
    finally:
        close_container(setup.container, via_registry=setup.via_registry, warn=out.err)
    failed = data["failed"]
    if args.strict and failed:
        total = data["ok"] + failed
        raise CheckFailedError(f"{failed} of {total} services failed (--strict)", data=data)
    return Result(data=data)


def check(
    setup: Setup, wanted: list[str] | None, timeout: float, out: Output
) -> tuple[list[Row], dict[str, Any]]:
    """Run every row, printing as it goes; return the rows and the envelope data."""
    services = selected_services(setup.container.config, setup.configured, setup.installed, wanted)
    out.line(f"# configuration: {setup.source}")
    config_row = Row("config", "", "", ok=True)
    names = [config_row.label] + [
        f"{s}/{i}" if i != "default" else s
        for s in services
        for i in setup.container.config.instances(s)
    ]
    width = max(len(name) for name in names)
    adapter_width = 9
    out.line(format_row(config_row, width, adapter_width))

    def on_start(index: int, total: int, label: str) -> None:
        out.progress(index - 1, total, f"opening {label}")

    def on_row(index: int, total: int, row: Row) -> None:
        clear_progress(out)
        out.line(format_row(row, width, adapter_width))

    checked = run_checks(
        setup.container, services, timeout=timeout, on_start=on_start, on_row=on_row
    )
    rows = [config_row, *checked]
    ok, failed, skipped, line = summary(rows)
    if not services:
        out.line(
            "(no service is configured or installed: set <SERVICE>__<INSTANCE>__<FIELD> "
            "variables, or name one with --service)"
        )
    out.line(line)
    data = {"rows": [row.as_data() for row in rows], "ok": ok, "failed": failed, "skipped": skipped}
    return rows, data

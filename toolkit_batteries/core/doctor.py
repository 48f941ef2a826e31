"""``toolkit doctor`` and ``manage.py doctor``: open every configured service, one row each.

Both commands call this module (never each other; ``tests/test_layout.py``): the flags,
the rows and the summary are declared once here, and the commands only map
:class:`DoctorError` to their own exit codes (2 unknown ``--service``, 3 a configuration
that does not load). Each service instance is opened through the container and probed
(:func:`~toolkit_batteries.core.probe.probe`) on a worker thread abandoned after the
timeout; messages pass through :func:`~toolkit_batteries.core.redaction.redact_string`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLOSE_TIMEOUT",
    "OPEN_TIMEOUT",
    "DoctorError",
    "InvalidConfigurationError",
    "Row",
    "Setup",
    "UnknownServiceError",
    "add_doctor_flags",
    "check",
    "close_container",
    "env_services",
    "project_services",
    "run_checks",
    "selected_services",
    "setup_from_django",
]

#: Seconds each service may take to open and answer.
OPEN_TIMEOUT = 5.0
#: Seconds the container may take to close at the end.
CLOSE_TIMEOUT = 5.0


class DoctorError(Exception):
    """A doctor run cannot start; ``exit_code`` is the CLI contract's code for it."""

    exit_code = 1


class UnknownServiceError(DoctorError):
    """``--service`` names no service of the catalog (a usage error, exit 2)."""

    exit_code = 2


class InvalidConfigurationError(DoctorError):
    """The project's configuration does not load (exit 3)."""

    exit_code = 3


def add_doctor_flags(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument(
        "--deploy",
        action="store_true",
        help="also report the process topology (WEB_CONCURRENCY, Procfile, units) and each "
        "service whose memory state other processes cannot see (a failed row when several "
        "processes run)",
    )


@dataclass(slots=True)
class Row:
    """One line of the report."""

    service: str
    instance: str
    adapter: str
    ok: bool
    error: str = ""

    @property
    def label(self) -> str:
        """Return ``service`` or ``service/instance``."""
        return (
            self.service if self.instance in ("", "default") else f"{self.service}/{self.instance}"
        )

    @property
    def product(self) -> str:
        """Return what the adapter talks to (``sqlserver`` -> ``postgres``), else the name.

        Read from this row's service, so an adapter name two batteries share (``remote``)
        shows each battery's own product.
        """
        from toolkit_batteries.core.config_display import product_name

        return product_name(self.adapter, self.service) if self.adapter else ""

    def as_data(self) -> dict[str, Any]:
        """Return the row for the ``--json`` envelope (``adapter`` stays the canonical name)."""
        data: dict[str, Any] = {
            "service": self.service,
            "instance": self.instance,
            "adapter": self.adapter,
            "ok": self.ok,
        }
        if self.product != self.adapter:
            data["product"] = self.product
        if self.error:
            data["error"] = self.error
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
                raise UnknownServiceError(f"unknown service {name!r}{did_you_mean(name, SERVICES)}")
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
    from toolkit_batteries.core.loading import resolve_adapter
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


def format_row(row: Row, width: int, adapter_width: int) -> str:
    """Return one padded text row."""
    mark = "✔" if row.ok else f"✘ {row.error}"
    return f"{row.label.ljust(width)}  {row.product.ljust(adapter_width)}  {mark}"


def summary(rows: list[Row]) -> tuple[int, int, str]:
    """Return (ok, failed, the summary line)."""
    ok = sum(1 for r in rows if r.ok)
    failed = sum(1 for r in rows if not r.ok)
    line = f"All {ok} services OK" if not failed else f"Summary: {ok} OK, {failed} FAIL"
    return ok, failed, line


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


def env_services() -> set[str]:
    from toolkit_batteries.core.env import read_environ

    return set(read_environ(os.environ).services)


def setup_from_django(source: str) -> Setup:
    """Build the setup from the configured Django project (also ``manage.py doctor``)."""
    from toolkit_batteries import services
    from toolkit_batteries.core.errors import ConfigurationError

    try:
        container = services.container()
    except ConfigurationError as exc:
        raise InvalidConfigurationError(f"invalid configuration: {exc}") from None
    configured, installed = project_services()
    return Setup(container, configured, installed, True, source)


def project_services() -> tuple[set[str], set[str]]:
    """Return (configured, installed): the services the Django project declares.

    Configured: a key of ``settings.TOOLKIT`` or a ``<SERVICE>__...`` variable. Installed:
    ``toolkit_batteries.<service>`` in ``INSTALLED_APPS``. ``doctor`` and ``/readyz``
    both check their union, so a service never used since start still has a row.
    """
    from django.apps import apps
    from django.conf import settings

    from toolkit_batteries.core.catalog import SERVICES

    toolkit = getattr(settings, "TOOLKIT", None) or {}
    folded = {name.replace("_", ""): name for name in SERVICES}
    configured = {
        folded[key.lower().replace("_", "")]
        for key in toolkit
        if isinstance(key, str) and key.lower().replace("_", "") in folded
    } | env_services()
    installed = {
        config.name.rpartition(".")[2]
        for config in apps.get_app_configs()
        if config.name.startswith("toolkit_batteries.")
        and config.name.rpartition(".")[2] in SERVICES
    }
    return configured, installed


def check(
    setup: Setup,
    wanted: list[str] | None,
    timeout: float,
    say: Callable[[str], None],
    *,
    progress: Callable[[int, int, str], None] | None = None,
    clear: Callable[[], None] | None = None,
    deploy: bool = False,
) -> tuple[list[Row], dict[str, Any]]:
    """Run every row, printing each with ``say`` as it goes; return the rows and the data.

    ``progress(done, total, label)`` draws a transient line before each open and
    ``clear()`` erases it before the row prints (``toolkit doctor`` on a terminal).
    ``deploy`` adds the topology and the shared-state rows (:func:`deploy_rows`).
    """
    services = selected_services(setup.container.config, setup.configured, setup.installed, wanted)
    say(f"# configuration: {setup.source}")
    config_row = Row("config", "", "", ok=True)
    names = [config_row.label] + [
        f"{s}/{i}" if i != "default" else s
        for s in services
        for i in setup.container.config.instances(s)
    ]
    width = max(len(name) for name in names)
    adapter_width = max(9, *(len(name) for name in _products(setup.container.config, services)))
    say(format_row(config_row, width, adapter_width))

    def on_start(index: int, total: int, label: str) -> None:
        if progress is not None:
            progress(index - 1, total, f"opening {label}")

    def on_row(index: int, total: int, row: Row) -> None:
        if clear is not None:
            clear()
        say(format_row(row, width, adapter_width))

    checked = run_checks(
        setup.container, services, timeout=timeout, on_start=on_start, on_row=on_row
    )
    rows = [config_row, *checked]
    if setup.via_registry:
        for row in battery_rows():
            say(format_row(row, width, adapter_width))
            rows.append(row)
    topology_data: dict[str, Any] | None = None
    if deploy:
        shared, topology_data = deploy_rows(setup, say, width, adapter_width)
        rows += shared
    ok, failed, line = summary(rows)
    if not services:
        say(
            "(no service is configured or installed: set <SERVICE>__<INSTANCE>__<FIELD> "
            "variables, or name one with --service)"
        )
    warnings = battery_warnings(setup) if setup.via_registry else []
    for warning in warnings:
        say(f"warning: {warning}")
    say(line)
    data = {"rows": [row.as_data() for row in rows], "ok": ok, "failed": failed}
    if topology_data is not None:
        data["topology"] = topology_data
    if warnings:
        data["warnings"] = warnings
    return rows, data


def _products(config: Any, services: Iterable[str]) -> list[str]:
    """Return the product each configured instance will show (rows print as they finish,
    so the column is sized before any opens: ``meilisearch`` is wider than ``redis``)."""
    from .config_display import product_name
    from .loading import adapter_table

    shown = []
    for service in services:
        for instance in config.instances(service):
            try:
                adapter = str(config.service(service, instance).adapter or "")
                canonical = adapter_table(service).names.get(adapter.strip().lower(), adapter)
            except Exception:  # a row must never fail on its label; the open reports it
                continue
            shown.append(product_name(canonical, service))
    return shown


def battery_rows() -> list[Row]:
    """Return the rows batteries add to the doctor (a fail-open permission instance...).

    Each battery that has one declares ``doctor.doctor_rows()``
    (:func:`~toolkit_batteries.core.catalog.battery_hook`); the kernel names none.
    """
    from .catalog import SERVICES, battery_hook

    hooks = (battery_hook(service, "doctor", "doctor_rows") for service in SERVICES)
    return [row for hook in hooks if hook is not None for row in hook()]


def battery_warnings(setup: Setup) -> list[str]:
    """Return the warnings batteries add (jobs a ``queue_work`` would never run...).

    Each battery that has some declares ``doctor.doctor_warnings(setup)``.
    """
    from .catalog import SERVICES, battery_hook

    hooks = (battery_hook(service, "doctor", "doctor_warnings") for service in SERVICES)
    return [warning for hook in hooks if hook is not None for warning in hook(setup)]


def deploy_rows(
    setup: Setup, say: Callable[[str], None], width: int, adapter_width: int
) -> tuple[list[Row], dict[str, Any]]:
    """Print the topology; return one row per memory-state finding (failed if multi-process).

    The findings of the ``toolkit_batteries.W020``/``E020`` system checks
    (:mod:`toolkit_batteries.core.topology`).
    """
    from pathlib import Path

    from django.conf import settings

    from .topology import detect_topology, memory_findings

    services = setup.configured | setup.installed
    if settings.configured:
        topology = detect_topology()
    else:  # outside a project: the current directory, and no Django settings to read
        topology = detect_topology(Path.cwd())
        services.discard("auth")
    findings = memory_findings(setup.container.config, services)
    say(f"# deploy topology: {topology.describe()}")
    rows: list[Row] = []
    for finding in findings:
        if topology.multi_process:
            row = Row(finding.service, finding.instance, "memory", ok=False)
            row.error = f"per-process state, several processes: set {finding.fix}"
            rows.append(row)
            say(format_row(row, width, adapter_width))
        else:
            say(
                f"note: {finding.label} keeps its state in this process (memory); "
                "fine while one process runs"
            )
    data = topology.as_data() | {"memory_state": [f.label for f in findings]}
    return rows, data

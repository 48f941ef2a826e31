"""Which processes a deployment runs, and which services keep state a second one cannot see.

A ``memory`` adapter keeps its state in one process. That is right on a laptop and on a
single-process server, and silently wrong as soon as a second process serves: a rate
limit counted per process lets N times the burst through, a lock taken in one worker
does not exclude another, an idempotency key replays in the worker that did not see it,
a revoked token keeps working in the others, a scheduler slot fires once per process.

One table (:data:`SHARED_STATE`) names the services whose state must be shared, and one
check reports them (never one copy per battery):

* ``toolkit_batteries.W020`` (``manage.py check``): outside development, a service of the
  table runs on ``memory`` and the topology is not declared single-process
  (``WEB_CONCURRENCY=1`` and no worker process). Silence it once you run one process.
* ``toolkit_batteries.E020`` (``manage.py check --deploy``, so ``toolkit serve`` outside
  development too): the same, when the topology has more than one process: ``WEB_CONCURRENCY``
  (or the ``workers`` of ``gunicorn.conf.py``, the Procfile's ``--workers``, a web unit's
  environment; the largest counts) above 1, or a worker process (``queue_work``,
  ``schedule_run``, ``outbox_relay``, ``webhook_work``, the workflow worker) in the
  project's ``Procfile`` or ``deploy/systemd`` units (``toolkit generate deploy`` writes them).

``toolkit doctor --deploy`` prints the same topology and findings. Messages name the
service, instance and the environment variable that moves it, never an option value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.core import checks

if TYPE_CHECKING:
    from django.apps import AppConfig

    from .config import Config

__all__ = [
    "SHARED_STATE",
    "WORKER_COMMANDS",
    "Finding",
    "Topology",
    "check_shared_state",
    "check_shared_state_deploy",
    "detect_topology",
    "memory_findings",
]

#: Service -> what a second process would not see on the ``memory`` adapter.
SHARED_STATE: Mapping[str, str] = {
    "ratelimit": "each process counts its own budget, so N processes let N times the rate in",
    "idempotency": "a retried request replays in the process that saw it and runs again "
    "in any other",
    "lock": "a lock held in one process does not exclude another",
    "session": "a session created in one process is unknown to the others",
    "eventbus": "an event published in one process reaches subscribers of that process only",
}
#: Management commands that are worker processes (a Procfile or unit running one of these).
WORKER_COMMANDS = (
    "queue_work",
    "queue:work",
    "schedule_run",
    "schedule:run",
    "outbox_relay",
    "outbox:relay",
    "webhook_work",
    "webhook:work",
    "workflow_work",
    "workflow:work",
)
_OBJ = "settings.TOOLKIT"
_WORKERS_LINE = re.compile(r"^\s*workers\s*=\s*(\d+)\s*$", re.M)
#: ``workers = int(os.environ.get("WEB_CONCURRENCY", "2"))``, as ``toolkit generate server``
#: writes it: the default counts when the variable is unset.
_WORKERS_DEFAULT = re.compile(
    r"^\s*workers\s*=\s*int\(\s*os\.environ\.get\(\s*[\"']WEB_CONCURRENCY[\"']\s*,"
    r"\s*[\"']?(\d+)[\"']?\s*\)\s*\)\s*$",
    re.M,
)
_WORKERS_FLAG = re.compile(r"--workers[= ](\d+)")
_UNIT_CONCURRENCY = re.compile(r"^Environment=\"?WEB_CONCURRENCY=(\d+)\"?\s*$", re.M)


@dataclass(frozen=True, slots=True)
class Topology:
    """The processes this project declares: web workers and worker processes."""

    #: Web worker processes, ``None`` when nothing declares them.
    web_workers: int | None
    #: Where ``web_workers`` came from (``WEB_CONCURRENCY``, ``gunicorn.conf.py``, ``Procfile``,
    #: a unit's name): the source declaring the most.
    web_source: str = ""
    #: Worker processes found (``queue_work (Procfile)``, ...).
    workers: tuple[str, ...] = ()

    @property
    def multi_process(self) -> bool:
        """More than one process serves or works: memory state is no longer shared."""
        return (self.web_workers or 1) > 1 or bool(self.workers)

    @property
    def single_process(self) -> bool:
        """The topology is declared as exactly one process (``WEB_CONCURRENCY=1``, no worker)."""
        return self.web_workers == 1 and not self.workers

    def describe(self) -> str:
        """Return one line: ``web workers: 2 (WEB_CONCURRENCY); workers: queue_work (Procfile)``."""
        web = (
            f"{self.web_workers} ({self.web_source})"
            if self.web_workers is not None
            else "not declared (WEB_CONCURRENCY unset: 1)"
        )
        workers = ", ".join(self.workers) if self.workers else "none"
        return f"web workers: {web}; worker processes: {workers}"

    def as_data(self) -> dict[str, Any]:
        return {
            "web_workers": self.web_workers,
            "web_source": self.web_source,
            "workers": list(self.workers),
            "multi_process": self.multi_process,
        }


@dataclass(frozen=True, slots=True)
class Finding:
    """One service instance whose state stays in one process."""

    service: str
    instance: str
    reason: str
    variable: str = field(default="")

    @property
    def label(self) -> str:
        return f"{self.service}.{self.instance}"

    @property
    def fix(self) -> str:
        """Return the variable assignment that moves it to a shared store."""
        if self.variable == "TOOLKIT_AUTH_REVOCATION":
            return "TOOLKIT_AUTH_REVOCATION=cache"
        return f"{self.variable}=kvserver"

    def message(self) -> str:
        return f"{self.label} keeps its state in this process (memory): {self.reason}"


def _positive_int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and int(text) > 0 else None


def _base_dir() -> Path:
    from django.conf import settings

    base = getattr(settings, "BASE_DIR", None)
    return Path(base) if base else Path.cwd()


def detect_topology(
    base_dir: Path | None = None, environ: Mapping[str, str] | None = None
) -> Topology:
    """Read the declared topology: ``WEB_CONCURRENCY``, ``gunicorn.conf.py``, ``Procfile``, units.

    Only files are read (nothing is imported or executed): ``workers = <int>`` in
    ``gunicorn.conf.py`` (or the default of ``int(os.environ.get("WEB_CONCURRENCY", "N"))``
    when the variable is unset), ``--workers N`` on the Procfile's ``web`` line,
    ``Environment=WEB_CONCURRENCY=N`` in a unit that runs ``toolkit serve``, and every
    Procfile line or ``deploy/systemd/*.service`` unit that runs a worker command.

    The web worker count is the largest any of them declares: gunicorn lets its command
    line beat its configuration file and the file beat the variable, so a check run with
    ``WEB_CONCURRENCY=1`` in its shell must still see the ``--workers 4`` the Procfile
    starts; erring towards "several processes" costs a warning, the other way a silent
    split of shared state.
    """
    env = os.environ if environ is None else environ
    base = _base_dir() if base_dir is None else base_dir
    declared: list[tuple[int, str]] = []
    from_env = _positive_int(str(env.get("WEB_CONCURRENCY", "")))
    if from_env is not None:
        declared.append((from_env, "WEB_CONCURRENCY"))
    workers: list[str] = []
    procfile = base / "Procfile"
    if procfile.is_file():
        for line in procfile.read_text(encoding="utf-8", errors="replace").splitlines():
            name, sep, command = line.partition(":")
            if not sep or name.strip().startswith("#"):
                continue
            if name.strip() == "web":
                flag = _WORKERS_FLAG.search(command)
                if flag and int(flag.group(1)) > 0:
                    declared.append((int(flag.group(1)), "Procfile"))
            found = next((c for c in WORKER_COMMANDS if c in command.split()), None)
            if found:
                workers.append(f"{found.replace(':', '_')} (Procfile)")
    units = base / "deploy" / "systemd"
    if units.is_dir():
        for unit in sorted(units.glob("*.service")):
            text = unit.read_text(encoding="utf-8", errors="replace")
            words = text.split()
            found = next((c for c in WORKER_COMMANDS if c in words), None)
            label = f"{found.replace(':', '_') if found else ''} ({unit.name})"
            if found and label not in workers:
                workers.append(label)
            concurrency = _UNIT_CONCURRENCY.search(text)
            if concurrency and "serve" in words and int(concurrency.group(1)) > 0:
                declared.append((int(concurrency.group(1)), unit.name))
    config_file = base / "gunicorn.conf.py"
    if config_file.is_file():
        text = config_file.read_text(encoding="utf-8", errors="replace")
        literal = _WORKERS_LINE.search(text)
        default = _WORKERS_DEFAULT.search(text)
        if literal and int(literal.group(1)) > 0:
            declared.append((int(literal.group(1)), "gunicorn.conf.py"))
        elif default and from_env is None and int(default.group(1)) > 0:
            declared.append((int(default.group(1)), "gunicorn.conf.py, WEB_CONCURRENCY unset"))
    web, source = max(declared, key=lambda pair: pair[0], default=(None, ""))
    return Topology(web, source, tuple(workers))


def _memory_instances(config: Config, service: str) -> Iterator[str]:
    from .checks import resolved_instances

    named = _named_instances(service)
    for cfg, adapter in resolved_instances(config, service):
        if adapter == "memory" and cfg.instance in named:
            yield cfg.instance


def _named_instances(service: str) -> set[str]:
    """Return the instances the project names (settings or environment).

    Every service has a ``default`` instance; when the settings list only named ones
    (``ratelimit``: ``login``, ``register``) and no variable names ``default``, nothing
    uses it, so its memory adapter is not reported.
    """
    from .checks import toolkit_settings
    from .env import read_environ

    block = toolkit_settings().get(service)
    names: set[str] = set()
    if not isinstance(block, Mapping) or not block or {"adapter", "options"} & set(block):
        names.add("default")
    else:
        names.update(str(key) for key in block)
    names.update(read_environ(os.environ).services.get(service, {}))
    return names


def _variable(service: str, instance: str) -> str:
    return f"{service.upper()}__{instance.upper()}__ADAPTER"


def memory_findings(config: Config, services: set[str]) -> list[Finding]:
    """Return every instance of ``services`` whose shared state lives in one process.

    ``services`` are the ones the project configures or installs; the scheduler's
    claims and the auth battery's revocations are reported through the lock and session
    (or memory revocation store) they sit on.
    """
    found: list[Finding] = []
    for service, reason in SHARED_STATE.items():
        if service not in services:
            continue
        for instance in _memory_instances(config, service):
            found.append(Finding(service, instance, reason, _variable(service, instance)))
    if "scheduler" in services:
        found.extend(_scheduler_findings(config))
    # What a battery adds (auth: revocations kept in one process), declared by the
    # battery as ``doctor.memory_findings(config)``; the kernel names no battery.
    from .catalog import battery_hook

    for service in sorted(services):
        hook = battery_hook(service, "doctor", "memory_findings")
        if hook is not None:
            found.extend(hook(config))
    return found


def _scheduler_findings(config: Config) -> Iterator[Finding]:
    """Report embedded schedulers claiming slots on a memory lock (each process fires)."""
    from .checks import resolved_instances

    memory_locks = set(_memory_instances(config, "lock"))
    lock_instances = set(config.instances("lock"))
    for cfg, adapter in resolved_instances(config, "scheduler"):
        if adapter != "embedded":
            continue
        lock = cfg.instance if cfg.instance in lock_instances else "default"
        if lock in memory_locks:
            yield Finding(
                "scheduler",
                cfg.instance,
                f"its slot claims are taken on lock.{lock} (memory), so every process "
                "that runs the scheduler fires each slot",
                _variable("lock", lock),
            )


def _findings() -> tuple[list[Finding], Topology]:
    from .checks import toolkit_settings
    from .config import Config
    from .doctor import project_services
    from .errors import ConfigurationError

    try:
        config = Config.load(toolkit_settings(), os.environ)
    except ConfigurationError:
        return [], detect_topology()  # toolkit_batteries.E001 reports it
    configured, installed = project_services()
    return memory_findings(config, configured | installed), detect_topology()


def _hint(finding: Finding) -> str:
    if finding.variable == "TOOLKIT_AUTH_REVOCATION":
        return (
            'set TOOLKIT_AUTH_REVOCATION = "cache" (a kvserver cache) or "session" over a '
            "kvserver or db session store; docs/deploy.md"
        )
    return f"set {finding.variable}=kvserver (or db where the battery has one); docs/deploy.md"


def check_shared_state(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """``toolkit_batteries.W020``: memory state outside development, topology not single."""
    from toolkit_batteries.serving import is_development

    if is_development():
        return []
    findings, topology = _findings()
    if topology.single_process:
        return []
    return [
        checks.Warning(
            f"{finding.message()} (outside development; {topology.describe()})",
            hint=_hint(finding) + "; or declare one process with WEB_CONCURRENCY=1",
            obj=_OBJ,
            id="toolkit_batteries.W020",
        )
        for finding in findings
    ]


def check_shared_state_deploy(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """``toolkit_batteries.E020`` (``--deploy``): memory state with more than one process."""
    findings, topology = _findings()
    if not topology.multi_process:
        return []
    return [
        checks.Error(
            f"{finding.message()}, and this deployment runs several processes "
            f"({topology.describe()})",
            hint=_hint(finding),
            obj=_OBJ,
            id="toolkit_batteries.E020",
        )
        for finding in findings
    ]

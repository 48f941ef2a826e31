"""The process definitions ``toolkit generate deploy`` writes: a Procfile, systemd units.

One topology, three spellings. The processes are the ones the project's installed
batteries need (read from ``settings.py``, without importing it):

* ``web``: ``toolkit serve`` (gunicorn, ``WEB_CONCURRENCY`` worker processes). Ready when
  ``GET /readyz`` answers 200; SIGTERM stops taking connections and gives requests in
  flight 30 s (gunicorn's ``graceful_timeout``).
* ``worker``: ``toolkit queue:work`` (jobs, and the workflow battery's steps). SIGTERM
  finishes the jobs in progress; a job cut off by SIGKILL is redelivered after the
  queue's visibility timeout.
* ``scheduler`` (scheduler battery): ``toolkit schedule:run``, one per deployment is
  enough (slots are claimed on the lock, so a second one is a standby, not a duplicate,
  once the lock is shared).
* ``outbox`` (outbox battery): ``toolkit outbox:relay``; SIGTERM lets the batch in flight
  finish.

Each systemd unit stops with SIGTERM and a ``TimeoutStopSec`` above the process's own
grace period, restarts on failure, and reads its environment from one file. The
container file (``--container``) installs from a local wheel directory only, so the
build fetches nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Process", "container_file", "processes", "procfile", "systemd_unit"]

#: Seconds gunicorn gives requests in flight after SIGTERM (``toolkit serve``'s default).
WEB_GRACE = 30
#: Seconds a worker's job may take to finish after SIGTERM before systemd kills it.
WORKER_GRACE = 60


@dataclass(frozen=True, slots=True)
class Process:
    """One process type of the deployment."""

    name: str
    command: str
    #: How many to run (web: gunicorn workers inside one process; others: instances).
    count: int
    grace: int
    readiness: str
    shutdown: str
    #: A systemd template unit (``name@.service``) started once per instance.
    template: bool = False


def installed_batteries(settings_text: str) -> set[str]:
    """Return the batteries ``settings.py`` lists in ``INSTALLED_APPS`` (by their text)."""
    return set(re.findall(r"[\"']toolkit_batteries\.(\w+)[\"']", settings_text))


def processes(batteries: set[str], web_workers: int, queue_workers: int) -> list[Process]:
    """Return the processes the installed ``batteries`` need."""
    found = [
        Process(
            "web",
            "toolkit serve",
            web_workers,
            WEB_GRACE,
            "GET /readyz answers 200 (every configured service answers); /healthz is liveness",
            f"SIGTERM: stop accepting, finish requests in flight within {WEB_GRACE}s",
        )
    ]
    if "queue" in batteries or "workflow" in batteries:
        found.append(
            Process(
                "worker",
                "toolkit queue:work",
                queue_workers,
                WORKER_GRACE,
                "`toolkit doctor --strict --service queue` before start (the queue answers)",
                "SIGTERM: finish the jobs in progress, pop nothing more, exit 0",
                template=True,
            )
        )
    if "scheduler" in batteries:
        found.append(
            Process(
                "scheduler",
                "toolkit schedule:run",
                1,
                WEB_GRACE,
                "`toolkit doctor --strict --service queue --service lock` before start",
                "SIGTERM: stop after the dispatch in progress, exit 0",
            )
        )
    if "outbox" in batteries:
        found.append(
            Process(
                "outbox",
                "toolkit outbox:relay",
                1,
                WEB_GRACE,
                "`toolkit doctor --strict --service outbox` before start",
                "SIGTERM: the batch in flight is published and marked, then exit 0",
            )
        )
    return found


def procfile(found: list[Process]) -> str:
    """Return the ``Procfile`` (honcho, foreman, Heroku, Dokku): one line per type."""
    lines = [
        "# Written by `toolkit generate deploy`; docs/deploy.md explains each process.",
        "# Scale: WEB_CONCURRENCY sets the web workers inside `web`; run the other types",
        "# as many times as listed (`honcho start -c worker=2`, `heroku ps:scale worker=2`).",
    ]
    for process in found:
        lines.append(f"#   {process.name} x{process.count}: {process.readiness}")
        lines.append(f"#     stop: {process.shutdown}")
    lines.append("release: toolkit db migrate")
    lines += [f"{process.name}: {process.command}" for process in found]
    return "\n".join(lines) + "\n"


def systemd_unit(process: Process, package: str, directory: str, user: str) -> str:
    """Return the unit of ``process``; a template unit (``@``) for several instances."""
    description = f"{package} {process.name}" + (" %i" if process.template else "")
    ready = ""
    if process.name == "web":
        ready = (
            "# Ready: GET /readyz answers 200 on the port it binds (8080 unless --port or\n"
            "# gunicorn.conf.py says otherwise); point the load balancer at it.\n"
        )
    elif "doctor" in process.readiness:
        doctor = process.readiness.split("`")[1]
        ready = (
            "# Ready: the services it needs answer, checked before it starts.\n"
            f"ExecStartPre={directory}/.venv/bin/{doctor}\n"
        )
    environment = f"Environment=WEB_CONCURRENCY={process.count}\n" if process.name == "web" else ""
    return (
        "# Written by `toolkit generate deploy`; docs/deploy.md explains each process.\n"
        + (
            f"# Start {process.count}: systemctl enable --now "
            + " ".join(f"{package}-{process.name}@{n}" for n in range(1, process.count + 1))
            + "\n"
            if process.template
            else ""
        )
        + "[Unit]\n"
        f"Description={description}\n"
        "After=network-online.target\n"
        "Wants=network-online.target\n\n"
        "[Service]\n"
        "Type=exec\n"
        f"User={user}\n"
        f"WorkingDirectory={directory}\n"
        f"EnvironmentFile={directory}/.env\n"
        + environment
        + ready
        + f"ExecStart={directory}/.venv/bin/{process.command}\n"
        f"# Stop: {process.shutdown}.\n"
        "KillSignal=SIGTERM\n"
        "KillMode=mixed\n"
        f"TimeoutStopSec={process.grace + 5}\n"
        "Restart=on-failure\n"
        "RestartSec=5\n\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n"
    )


def container_file(package: str) -> str:
    """Return a ``Containerfile`` that installs from ``wheels/`` only (nothing fetched)."""
    probe = (
        '"import urllib.request; '
        "urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=4)\""
    )
    return f"""# Written by `toolkit generate deploy --container`. The build fetches nothing: it
# installs the wheels you built beforehand, on a machine with the package index:
#   pip wheel --wheel-dir wheels -r requirements.txt     (pip freeze > requirements.txt)
#   docker build -f Containerfile -t {package} .            (or podman build)
# One image, every process: `docker run {package}` is the web server; the others run
# the same image with another command (toolkit queue:work, toolkit schedule:run, ...).
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PORT=8080
WORKDIR /app
COPY wheels/ /tmp/wheels/
RUN pip install --no-index --find-links /tmp/wheels /tmp/wheels/*.whl && rm -rf /tmp/wheels
COPY . /app
RUN useradd --system --home /app {package} && chown -R {package} /app
USER {package}
EXPOSE 8080
# Stop: SIGTERM, then the grace period of the process (30 s for the web server).
STOPSIGNAL SIGTERM
# Ready: /readyz answers 200 once every configured service answers.
HEALTHCHECK --interval=10s --timeout=5s CMD python -c {probe}
CMD ["toolkit", "serve"]
"""

"""The files ``toolkit generate`` writes: jobs, schedules, server, worker, seeds, tinker.

Each function returns finished source text that imports, passes ``ruff check`` and is
left unchanged by ``ruff format``; the contracts with the runtime commands are:

* ``<app>/jobs.py``: ``@job`` functions of the queue battery, found by ``queue:work``;
* ``<app>/schedules.py``: ``SCHEDULES = [Schedule(name, cron=..., job=...)]``, found by
  ``schedule:run`` in every installed app;
* ``gunicorn.conf.py`` at the project root: used by ``serve`` when present;
* ``<app>/seeds.py``: ``run()``, called by ``db seed`` inside a transaction;
* ``tinker.py`` at the project root: executed into ``tinker``'s shell namespace.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "PROCFILE",
    "SeedModel",
    "gunicorn_conf",
    "job_block",
    "jobs_header",
    "schedule_line",
    "schedules_module",
    "seed_module",
    "tinker_module",
    "worker_jobs_module",
]

#: ``generate job``'s retry policy: three attempts, 30 s then 60 s apart.
RETRY = '{"max_attempts": 3, "base_delay": "30s", "multiplier": 2}'


def jobs_header(app: str) -> str:
    """Return the top of a new ``<app>/jobs.py``."""
    return (
        f'"""Background jobs of the {app} app.\n\n'
        "`toolkit queue:work` (``python manage.py queue_work``) runs them: it imports the\n"
        "``jobs`` module of every installed app. Dispatch one with ``<job>.dispatch(...)``.\n"
        '"""\n\n'
        "from toolkit_batteries.queue.jobs import job\n"
    )


def job_block(function: str, name: str, queue: str) -> str:
    """Return one job: the ``@job`` decorator and a function to fill in."""
    import textwrap

    from toolkit_codegen.pysource import Call, Lit, Raw, render

    decorator = render(Call("@job", kwargs=[("queue", Lit(queue)), ("retry", Raw(RETRY))]))
    about = (
        f"A worker runs it; ``{function}.dispatch()`` queues it. Failures are retried: "
        "3 attempts in all, 30 s then 60 s apart."
    )
    wrap = textwrap.TextWrapper(92, break_long_words=False, break_on_hyphens=False).wrap
    doc = [*wrap(f"Run the {name} job."), "", *wrap(about)]
    lines = [f'    """{doc[0]}', *(f"    {line}" if line else "" for line in doc[1:]), '    """']
    return f"\n\n{decorator}\ndef {function}() -> None:\n" + "\n".join(lines) + "\n"


def schedule_line(name: str, cron: str, function: str) -> str:
    """Return one ``SCHEDULES`` item."""
    return f"Schedule({_q(name)}, cron={_q(cron)}, job={function}),"


def schedules_module(app: str, name: str, cron: str, function: str) -> str:
    """Return a new ``<app>/schedules.py`` holding one schedule."""
    return (
        f'"""Cron schedules of the {app} app.\n\n'
        "`toolkit schedule:run` (``python manage.py schedule_run``) reads ``SCHEDULES`` from\n"
        "every installed app and dispatches each job to the queue when its time comes.\n"
        '"""\n\n'
        "from toolkit_batteries.scheduler import Schedule\n\n"
        f"from .jobs import {function}\n\n"
        "SCHEDULES = [\n"
        f"    {schedule_line(name, cron, function)}\n"
        "]\n"
    )


def gunicorn_conf(package: str) -> str:
    """Return ``gunicorn.conf.py`` for the project whose settings package is ``package``."""
    return f'''"""Gunicorn settings: `toolkit serve` runs gunicorn with this file when it exists.

Everything can be set from the environment, so one image serves every deployment:
HOST and PORT (default 0.0.0.0:8080), WEB_CONCURRENCY (worker processes, default 2).
On SIGTERM gunicorn stops taking connections and gives requests in flight
``graceful_timeout`` seconds to finish.
"""

import os

wsgi_app = "{package}.wsgi:application"
bind = f"{{os.environ.get('HOST', '0.0.0.0')}}:{{os.environ.get('PORT', '8080')}}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
graceful_timeout = 30
timeout = 30
# Access and error logs go to standard error, for the platform to collect; standard
# output stays free for `toolkit serve --json`'s envelope.
accesslog = "/dev/stderr"
errorlog = "-"
'''


#: The process types of a Procfile (Heroku, Dokku, honcho, foreman...).
PROCFILE = "web: toolkit serve\nworker: toolkit queue:work\nscheduler: toolkit schedule:run\n"


def worker_jobs_module(app: str) -> str:
    """Return a first ``<app>/jobs.py`` with one harmless job to try the worker with."""
    return (
        jobs_header(app).replace(
            "from toolkit_batteries.queue.jobs import job\n",
            "import logging\n\nfrom toolkit_batteries.queue.jobs import job\n\n"
            'logger = logging.getLogger("toolkit.app")\n',
        )
        + "\n\n"
        + '@job(queue="default")\n'
        + "def heartbeat() -> None:\n"
        + '    """Log that a worker ran a job (`heartbeat.dispatch()` tries the queue)."""\n'
        + '    logger.info("worker heartbeat")\n'
    )


@dataclass(frozen=True)
class SeedModel:
    """The model a generated seed creates, and how."""

    name: str
    #: ``(field, python literal)`` that finds the row (the ``get_or_create`` lookup).
    lookup: tuple[str, str]
    #: ``(field, python expression)`` for the other required fields.
    defaults: tuple[tuple[str, str], ...]
    #: Modules the expressions need (``uuid``, ``django.utils.timezone``).
    imports: tuple[str, ...] = ()


def seed_module(app: str, model: SeedModel | None) -> str:
    """Return ``<app>/seeds.py``: an idempotent ``run()`` for ``toolkit db seed``."""
    head = (
        f'"""Seed data of the {app} app: `toolkit db seed` calls ``run()`` in a transaction.\n\n'
        "Keep it idempotent (``get_or_create``, ``update_or_create``): seeding twice must leave\n"
        "the database as seeding once did.\n"
        '"""\n\n'
    )
    if model is None:
        return head + (
            "import logging\n\n"
            'logger = logging.getLogger("toolkit.app")\n\n\n'
            "def run() -> None:\n"
            '    """Create this app\'s sample rows (none yet: add them here).\n\n'
            "    For example, with a ``Note`` model::\n\n"
            "        from .models import Note\n\n"
            '        Note.objects.get_or_create(title="Welcome", defaults={"done": False})\n'
            '    """\n'
            f'    logger.info("seed: nothing to seed in {app} yet")\n'
        )
    stdlib = sorted(m for m in model.imports if "." not in m)
    third = sorted(m for m in model.imports if "." in m)
    lines = ["import logging"] + [f"import {m}" for m in stdlib]
    if third:
        lines.append("")
        lines += [f"from {m.rpartition('.')[0]} import {m.rpartition('.')[2]}" for m in third]
    lines += ["", "from . import models", "", 'logger = logging.getLogger("toolkit.app")']
    key, value = model.lookup
    call = [f"    row, created = models.{model.name}.objects.get_or_create("]
    call.append(f"        {key}={value},")
    if model.defaults:
        pairs = ", ".join(f"{_q(k)}: {v}" for k, v in model.defaults)
        one = f"        defaults={{{pairs}}},"
        if len(one) <= 100:
            call.append(one)
        else:
            call.append("        defaults={")
            call += [f"            {_q(k)}: {v}," for k, v in model.defaults]
            call.append("        },")
    call.append("    )")
    body = [
        "",
        "",
        "def run() -> None:",
        f'    """Create one example {model.name}; running it again changes nothing."""',
        *call,
        f'    logger.info("seed: %s {model.name} %s", "created" if created else "kept", row.pk)',
    ]
    return head + "\n".join(lines + body) + "\n"


def tinker_module(package: str) -> str:
    """Return ``tinker.py``: names ``toolkit tinker`` puts in the shell at start."""
    return f'''"""Loaded into `toolkit tinker` at start: whatever you want at hand in the shell.

`toolkit tinker` (``python manage.py tinker``) executes this file into the shell's
namespace after Django is set up, so every name defined here is ready to use:

    >>> services.cache().set("greeting", "hello")
    >>> model("Note").objects.count()

The shell is a development tool: it reaches the configured services for real.
"""

from django.apps import apps
from django.conf import settings
from toolkit_batteries import services

__all__ = ["apps", "model", "models", "services", "settings"]

#: The project this shell runs in.
PROJECT = "{package}"


def models() -> dict[str, type]:
    """Return every installed model by class name (``models()["Note"]``)."""
    return {{m.__name__: m for m in apps.get_models()}}


def model(name: str) -> type:
    """Return the installed model called ``name`` (``app_label.Model`` or ``Model``)."""
    if "." in name:
        return apps.get_model(name)
    found = models()
    if name not in found:
        raise LookupError(f"no model {{name!r}}; installed: {{', '.join(sorted(found))}}")
    return found[name]
'''


def _q(text: str) -> str:
    """Return ``text`` as a double-quoted literal (callers pass checked names only)."""
    return f'"{text}"'

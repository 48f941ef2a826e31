"""``manage.py queue_work``: run jobs until stopped (``toolkit queue:work`` maps onto it).

::

    python manage.py queue_work                          # every job's queue, one thread
    python manage.py queue_work --queue emails --queue default --concurrency 4
    python manage.py queue_work --pool processes --concurrency 4
    python manage.py queue_work --once                   # one job (or poll_timeout), exit
    python manage.py queue_work --max-jobs 100           # exit after 100 jobs
    python manage.py queue_work --stop-when-empty        # drain, then exit

SIGTERM or SIGINT finishes the jobs in progress, stops popping and exits 0; a second
signal exits at once (exit 1; unacknowledged jobs are redelivered after the visibility
timeout). With ``TOOLKIT_JOBS["dispatcher"] = "celery"`` the command starts Celery's
worker on the same queues instead. Exit codes follow the CLI contract: 0 done, 2 bad
flags, 3 invalid configuration, 5 the queue's server is unreachable.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from django.core.management.base import CommandError

from toolkit_batteries.core.commands import (
    EXIT_INVALID,
    EXIT_USAGE,
    RunnerCommand,
    in_process_only,
    service_errors,
)
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.queue.worker_args import add_worker_arguments


class Command(RunnerCommand):
    """Run the job worker."""

    help = "Run queued jobs until stopped (SIGTERM/SIGINT finish the current jobs first)."
    flags = add_worker_arguments

    def handle(self, *args: Any, **options: Any) -> None:
        """Load the settings and the jobs, then work (or hand over to Celery)."""
        from toolkit_batteries.queue.jobs import import_job_modules, jobs_settings
        from toolkit_batteries.queue.jobs.served import default_worker_queues

        try:
            conf = jobs_settings()
            import_job_modules(conf)
        except ConfigurationError as exc:
            raise CommandError(str(exc), returncode=EXIT_INVALID) from None
        # Without --queue: TOOLKIT_JOBS["queues"], else "default" and every job's queue.
        queues = [
            name.strip()
            for value in options["queues"] or default_worker_queues(conf)
            for name in value.split(",")
            if name.strip()
        ]
        if conf.dispatcher == "celery":
            self._celery(queues, options)
        elif options["pool"] == "processes" and options["concurrency"] > 1:
            self._supervise(options)
        else:
            self._work(queues, options, options["instance"] or conf.queue_instance)

    # ------------------------------------------------------------------ queue worker

    def _work(self, queues: list[str], options: dict[str, Any], instance: str) -> None:
        from toolkit_batteries import services
        from toolkit_batteries.queue.jobs import Worker

        with service_errors():
            queue = services.queue(instance)
        try:
            worker = Worker(
                queue,
                queues=queues,
                concurrency=options["concurrency"],
                max_jobs=options["max_jobs"],
                once=options["once"],
                stop_when_empty=options["stop_when_empty"],
            )
        except ValueError as exc:
            raise CommandError(str(exc), returncode=EXIT_USAGE) from None
        if queue.adapter_name == "memory":
            message = "use the kvserver or db adapter"
            self.stderr.write(in_process_only("queue_work", "queue", "jobs dispatched", message))
        self.stdout.write(
            f"queue_work: {queue.adapter_name} queue.{queue.instance}, queues "
            f"{', '.join(worker.queues)}, {worker.concurrency} thread(s) (pid {os.getpid()})"
        )
        self.stdout.flush()
        stats = worker.run(install_signal_handlers=True)
        self.stdout.write(
            f"queue_work: stopped after {stats.processed} job(s): {stats.succeeded} succeeded, "
            f"{stats.retried} retried, {stats.dead} dead"
        )

    # ------------------------------------------------------------------ process pool

    def _supervise(self, options: dict[str, Any]) -> None:
        """Run ``concurrency`` single-threaded workers as child processes.

        Signals are forwarded; a child that dies unexpectedly is restarted with a backoff
        (1 s doubling to 30 s) and a budget (5 restarts a minute, then every child is
        stopped and the command exits 1); see :mod:`toolkit_batteries.queue.supervisor`.
        The command exits 0 once every child has stopped cleanly after a signal, 1 if one
        of them failed.
        """
        from django.conf import settings

        if not settings.SETTINGS_MODULE:
            raise CommandError(
                "--pool processes needs DJANGO_SETTINGS_MODULE (the children load it)",
                returncode=EXIT_USAGE,
            )
        argv = [sys.executable, "-m", "django", "queue_work", "--concurrency", "1"]
        for name in options["queues"] or []:
            argv += ["--queue", name]
        for flag in ("once", "stop_when_empty"):
            if options[flag]:
                argv.append("--" + flag.replace("_", "-"))
        if options["max_jobs"]:
            argv += ["--max-jobs", str(options["max_jobs"])]
        if options["instance"]:
            argv += ["--instance", options["instance"]]
        env = dict(os.environ)
        env["DJANGO_SETTINGS_MODULE"] = settings.SETTINGS_MODULE
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), env.get("PYTHONPATH")]))
        from toolkit_batteries.queue.supervisor import Supervisor

        bounded = options["once"] or options["max_jobs"] or options["stop_when_empty"]

        supervisor = Supervisor(
            argv, count=options["concurrency"], env=env, restart=not bounded, log=self.say
        )
        if supervisor.run() != 0:
            reason = "kept failing" if supervisor.gave_up else "failed"
            raise CommandError(f"queue_work: worker processes {reason}", returncode=1)

    # ------------------------------------------------------------------ celery

    def _celery(self, queues: list[str], options: dict[str, Any]) -> None:
        if options["once"] or options["max_jobs"] or options["stop_when_empty"]:
            raise CommandError(
                "--once, --max-jobs and --stop-when-empty need the queue dispatcher "
                '(TOOLKIT_JOBS["dispatcher"] is "celery")',
                returncode=EXIT_USAGE,
            )
        from toolkit_batteries.queue.celery_app import get_app

        # Celery's solo pool holds a retried task's countdown hostage to the broker loop
        # (seconds late on RabbitMQ); a one-thread pool keeps countdowns on time.
        pool = "prefork" if options["pool"] == "processes" else "threads"
        argv = [
            "worker",
            "--queues",
            ",".join(queues),
            "--concurrency",
            str(options["concurrency"]),
            "--pool",
            pool,
            "--loglevel",
            "INFO",
        ]
        get_app().worker_main(argv)

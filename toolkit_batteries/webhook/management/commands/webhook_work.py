"""``manage.py webhook_work``: run the deliveries of a ``queue`` webhook instance.

Needed when the instance has a queue of its own (``queue_adapter`` or ``queue_opts``
set); with the project's queue, ``queue_work --queue webhooks`` does the same. SIGTERM
or SIGINT finish the attempt in flight, then exit.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Run webhook deliveries queued by a webhook instance with the queue adapter."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--instance", default="default", help="webhook instance")
        parser.add_argument("--concurrency", type=int, default=1, help="worker threads")
        parser.add_argument("--once", action="store_true", help="one delivery attempt, then exit")
        parser.add_argument("--max-jobs", type=int, default=None, help="exit after N attempts")
        parser.add_argument(
            "--stop-when-empty", action="store_true", help="exit once idle for poll_timeout"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from toolkit_batteries import services

        hook = services.webhook(options["instance"])
        if not hasattr(hook, "worker"):
            raise CommandError(
                f"webhook.{options['instance']}: the adapter is not queue; nothing to work"
            )
        worker = hook.worker(
            concurrency=options["concurrency"],
            once=options["once"],
            max_jobs=options["max_jobs"],
            stop_when_empty=options["stop_when_empty"],
        )
        stats = worker.run(install_signal_handlers=True)
        self.stdout.write(
            f"webhook.{options['instance']}: {stats.succeeded} attempt(s) handled, "
            f"{stats.dead} malformed"
        )

"""``manage.py workflow_runs``: start, list, inspect, signal, cancel, resume and recover runs.

::

    python manage.py workflow_runs start order --input '{"sku": "B-7"}' [--run-id order-7]
    python manage.py workflow_runs list [--workflow order] [--status waiting] [--limit 50]
    python manage.py workflow_runs show <run id>
    python manage.py workflow_runs signal <run id> approved [--payload '{"by": "ada"}']
    python manage.py workflow_runs cancel <run id>
    python manage.py workflow_runs resume <run id>
    python manage.py workflow_runs recover
    python manage.py workflow_runs purge --older-than 168h

Every command prints one JSON document on stdout. ``--instance`` picks another
``TOOLKIT["workflow"]`` instance. The steps themselves run on ``queue_work``. Exit
codes: 0 done, 1 the run is unknown or refused the action, 2 bad flags or JSON, 3
invalid configuration.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from toolkit_batteries.core.argtypes import duration_seconds
from toolkit_batteries.core.errors import ConfigurationError


def _json_arg(text: str | None, flag: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        raise CommandError(f"{flag} is not valid JSON", returncode=2) from None


def _default(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else str(value)


class Command(BaseCommand):
    """Operate on workflow runs."""

    help = "Start, list, show, signal, cancel, resume or recover workflow runs (JSON output)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--instance", default="default", help="workflow instance")
        sub = parser.add_subparsers(dest="action", required=True)
        start = sub.add_parser("start", help="start a run")
        start.add_argument("workflow")
        start.add_argument("--input", default=None, help="the run's input, as JSON")
        start.add_argument("--run-id", default=None)
        listing = sub.add_parser("list", help="list runs, newest first")
        listing.add_argument("--workflow", default=None)
        listing.add_argument("--status", default=None)
        listing.add_argument("--limit", type=int, default=100)
        for action in ("show", "cancel", "resume"):
            sub.add_parser(action).add_argument("run_id")
        signal = sub.add_parser("signal", help="deliver a signal")
        signal.add_argument("run_id")
        signal.add_argument("name")
        signal.add_argument("--payload", default=None, help="the payload, as JSON")
        sub.add_parser("recover", help="queue a step job for every claimable run")
        purge = sub.add_parser("purge", help="delete finished runs idle for --older-than")
        purge.add_argument("--older-than", type=duration_seconds, required=True, metavar="DURATION")

    def handle(self, *args: Any, **options: Any) -> None:
        from toolkit_batteries import services
        from toolkit_batteries.workflow import RunNotFoundError, UnknownWorkflowError

        try:
            workflow = services.container().workflow(options["instance"])
        except ConfigurationError as exc:
            raise CommandError(str(exc), returncode=3) from None
        try:
            result = self._run(workflow, options)
        except (RunNotFoundError, UnknownWorkflowError) as exc:
            raise CommandError(str(exc), returncode=1) from None
        except (ValueError, TypeError) as exc:
            raise CommandError(str(exc), returncode=2) from None
        self.stdout.write(json.dumps(result, default=_default))
        if isinstance(result, dict) and result.get("ok") is False:
            raise CommandError(f"{options['action']} refused", returncode=1)

    def _run(self, workflow: Any, options: dict[str, Any]) -> Any:
        action = options["action"]
        if action == "start":
            run_id = workflow.start(
                options["workflow"],
                _json_arg(options["input"], "--input"),
                run_id=options["run_id"],
            )
            return {"ok": True, "run_id": run_id}
        if action == "list":
            runs = workflow.list(
                workflow=options["workflow"], status=options["status"], limit=options["limit"]
            )
            return [asdict(run) for run in runs]
        if action == "show":
            return asdict(workflow.get(options["run_id"]))
        if action == "signal":
            payload = _json_arg(options["payload"], "--payload")
            return {"ok": workflow.signal(options["run_id"], options["name"], payload)}
        if action == "cancel":
            return {"ok": workflow.cancel(options["run_id"])}
        if action == "resume":
            return {"ok": workflow.resume(options["run_id"])}
        if action == "purge":
            return {"ok": True, "deleted": workflow.purge(options["older_than"])}
        return {"ok": True, "queued": workflow.recover()}

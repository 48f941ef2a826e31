"""The job worker's flags, declared once.

``manage.py queue_work`` and ``toolkit queue:work`` both build their parsers with
:func:`add_worker_arguments`, so neither command imports the other (commands call plain
modules; ``tests/test_layout.py`` holds the rule) and the two cannot drift apart.
"""

from __future__ import annotations

import argparse

from toolkit_batteries.core.argtypes import positive_int

__all__ = ["WORKER_OPTIONS", "add_worker_arguments"]

#: The ``dest`` of every flag :func:`add_worker_arguments` adds.
WORKER_OPTIONS = (
    "queues",
    "concurrency",
    "pool",
    "once",
    "max_jobs",
    "stop_when_empty",
    "instance",
)


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the worker's flags."""
    parser.add_argument(
        "--queue",
        action="append",
        dest="queues",
        metavar="NAME",
        help='job queue to work (repeatable or comma-separated; default: TOOLKIT_JOBS["queues"], '
        'else "default" and every queue a job names)',
    )
    parser.add_argument(
        "--concurrency", type=positive_int, default=1, help="threads or processes (default 1)"
    )
    parser.add_argument(
        "--pool",
        choices=("threads", "processes"),
        default="threads",
        help="run the concurrency as threads (default) or child processes",
    )
    parser.add_argument("--once", action="store_true", help="handle one job, then exit")
    parser.add_argument(
        "--max-jobs", type=positive_int, default=None, help="exit after this many jobs"
    )
    parser.add_argument(
        "--stop-when-empty",
        action="store_true",
        help="exit once the queues stay empty for poll_timeout",
    )
    parser.add_argument(
        "--instance", default="", help="queue service instance (default: TOOLKIT_JOBS)"
    )

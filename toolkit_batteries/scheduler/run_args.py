"""The flags of the scheduler loop, declared once.

``manage.py schedule_run`` and ``toolkit schedule:run`` both build their parsers with
:func:`add_flags`, so neither imports the other (commands call plain modules; see
``tests/test_layout.py``) and the two cannot drift apart.
"""

from __future__ import annotations

import argparse

from toolkit_batteries.core.argtypes import positive_seconds


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Add the command's flags (shared with ``toolkit schedule:run``)."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--once", action="store_true", help="fire the schedules due this minute, then exit"
    )
    mode.add_argument(
        "--list", action="store_true", help="print every schedule with its next run, then exit"
    )
    parser.add_argument(
        "--tick",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="longest sleep between two looks at the clock (default 1; the loop also "
        "wakes at every minute boundary)",
    )

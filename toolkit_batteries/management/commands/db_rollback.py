"""``manage.py db_rollback [-n N] [--dry-run]``: unapply the newest N project migrations.

"Newest" is the order of ``django_migrations.applied`` (then its id), across the project's
own apps (those whose code lives under ``BASE_DIR``); each step runs ``migrate <app>
<previous>`` (``zero`` for an app's first migration), so Django unapplies anything that
depends on it too. ``toolkit db rollback`` (inside a project) is this command.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from toolkit_batteries.db.rollback import add_count_flag, rollback_migrations


class Command(BaseCommand):
    """Unapply the newest N migrations of the project's apps."""

    help = "Unapply the newest N applied migrations of the project's apps (default 1)."

    def add_arguments(self, parser: CommandParser) -> None:
        """Add ``-n`` and ``--dry-run``."""
        add_count_flag(parser)
        parser.add_argument(
            "--dry-run", action="store_true", help="list what would be unapplied; change nothing"
        )
        parser.add_argument("--database", default="default", help="database alias")

    def handle(self, *args: Any, **options: Any) -> None:
        """Roll back and list what was unapplied."""
        done = rollback_migrations(
            options["count"],
            dry_run=options["dry_run"],
            stdout=self.stdout,
            database=options["database"],
        )
        verb = "would unapply" if options["dry_run"] else "unapplied"
        for name in done:
            self.stdout.write(f"{verb} {name}")
        self.stdout.write(f"{len(done)} migration(s) {verb}")

"""``manage.py db_ping``: open the ``db`` service and check that it answers.

Prints the dialect and the target without its password. Exit codes follow the CLI
contract: 0 when the database answers, 3 for an invalid configuration, 5 when the
database is unreachable.
"""

from __future__ import annotations

import os
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from toolkit_batteries.core.errors import ConfigurationError, ToolkitError

EXIT_INVALID = 3
EXIT_UNREACHABLE = 5


class Command(BaseCommand):
    """Ping the configured database."""

    help = "Open the toolkit db service and run SELECT 1 (exit 5 when unreachable)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Add ``--instance``."""
        parser.add_argument(
            "--instance", default="default", help="db instance to ping (default: default)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Open a private container, ping, report, and close it again."""
        from django.conf import settings

        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        instance = options["instance"]
        try:
            config = Config.load(getattr(settings, "TOOLKIT", None) or {}, os.environ)
        except ConfigurationError as exc:
            raise CommandError(str(exc), returncode=EXIT_INVALID) from None
        container = Container(config)
        try:
            started = time.monotonic()
            try:
                db = container.db(instance)
                db.ping()
            except ConfigurationError as exc:
                raise CommandError(str(exc), returncode=EXIT_INVALID) from None
            except ToolkitError as exc:
                raise CommandError(str(exc), returncode=EXIT_UNREACHABLE) from None
            elapsed = (time.monotonic() - started) * 1000
            self.stdout.write(
                f"db.{db.instance}: ok ({db.dialect}, {db.target}, {db.adapter_name}) "
                f"in {elapsed:.1f}ms"
            )
        finally:
            try:
                container.close()
            except ExceptionGroup as group:
                for error in group.exceptions:
                    self.stderr.write(f"closing: {error}")

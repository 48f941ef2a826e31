"""``manage.py doctor [--strict] [--service NAME ...]``: ``toolkit doctor`` for this project.

The same rows as the CLI (it is the same code: :mod:`toolkit_batteries.cli.commands.doctor`),
with the CLI contract's exit codes: 0 (failures reported), 3 for a configuration that does
not load, 4 with ``--strict`` when any service fails.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    """Open every configured or installed service and report one row each."""

    help = "Open every configured or installed toolkit service; one row each (--strict: exit 4)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Add ``--strict``, ``--service`` and ``--timeout``."""
        parser.add_argument("--strict", action="store_true", help="exit 4 when any fails")
        parser.add_argument(
            "--service", action="append", default=None, help="check only this service"
        )
        parser.add_argument(
            "--timeout", type=float, default=5.0, help="seconds per service (default 5)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the checks through the CLI's implementation and map its errors."""
        from toolkit_batteries.cli.commands import doctor
        from toolkit_batteries.cli.output import CliError, Output

        out = Output(stdout=self.stdout, stderr=self.stderr)
        try:
            setup = doctor.setup_from_django("settings + environment")
            try:
                _rows, data = doctor.check(setup, options["service"], options["timeout"], out)
            finally:
                doctor.close_container(setup.container, via_registry=True, warn=out.err)
        except CliError as exc:
            raise CommandError(str(exc), returncode=exc.exit_code) from None
        if options["strict"] and data["failed"]:
            total = data["ok"] + data["failed"]
            raise CommandError(
                f"{data['failed']} of {total} services failed (--strict)", returncode=4
            )

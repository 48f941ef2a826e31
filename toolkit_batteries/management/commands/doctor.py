"""``manage.py doctor [--strict] [--service NAME ...]``: ``toolkit doctor`` for this project.

The same rows as the CLI (both call :mod:`toolkit_batteries.core.doctor`), with the CLI
contract's exit codes: 0 (failures reported), 2 an unknown ``--service``, 3 for a
configuration that does not load, 4 with ``--strict`` when any service fails.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from toolkit_batteries.core.commands import RunnerCommand, exit_codes
from toolkit_batteries.core.doctor import add_doctor_flags


class Command(RunnerCommand):
    """Open every configured or installed service and report one row each."""

    help = "Open every configured or installed toolkit service; one row each (--strict: exit 4)."
    flags = add_doctor_flags  # --strict, --service, --timeout and --deploy

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the shared checks and map their errors to the exit codes."""
        from toolkit_batteries.core import doctor

        with exit_codes(doctor.DoctorError):
            setup = doctor.setup_from_django("settings + environment")
            try:
                _rows, data = doctor.check(
                    setup,
                    options["service"],
                    options["timeout"],
                    self.say,
                    deploy=options["deploy"],
                )
            finally:
                doctor.close_container(setup.container, via_registry=True, warn=self.warn)
        if options["strict"] and data["failed"]:
            total = data["ok"] + data["failed"]
            raise CommandError(
                f"{data['failed']} of {total} services failed (--strict)", returncode=4
            )

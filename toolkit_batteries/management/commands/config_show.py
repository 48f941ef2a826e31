"""``manage.py config_show [--service NAME] [--format text|json]``: ``toolkit config show``.

Prints this project's resolved configuration (``settings.TOOLKIT`` plus the environment)
through :meth:`~toolkit_batteries.core.config.Config.redacted_services`, the only display
path, so no secret is printed. A configuration that does not load exits 3.
"""

from __future__ import annotations

import json
import os
from typing import Any

from django.core.management.base import CommandError, CommandParser

from toolkit_batteries.core.commands import RunnerCommand

EXIT_USAGE = 2
EXIT_INVALID = 3


class Command(RunnerCommand):
    """Show the resolved configuration, redacted."""

    help = "Show the resolved toolkit configuration (settings.TOOLKIT + environment), redacted."

    def add_arguments(self, parser: CommandParser) -> None:
        """Add ``--service`` and ``--format`` (the display module loads only when asked)."""
        from toolkit_batteries.core.config_display import add_show_flags

        add_show_flags(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        """Load, redact and print."""
        from django.conf import settings

        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.config_display import (
            UnknownServiceError,
            render_text,
            select,
            shown_services,
        )
        from toolkit_batteries.core.errors import ConfigurationError

        try:
            config = Config.load(getattr(settings, "TOOLKIT", None) or {}, os.environ)
        except ConfigurationError as exc:
            raise CommandError(f"invalid configuration: {exc}", returncode=EXIT_INVALID) from None
        mapping = shown_services(config)
        if not options["service"] and not mapping.get("plugins"):
            mapping.pop("plugins", None)
        try:
            mapping = select(mapping, options["service"])
        except UnknownServiceError as exc:
            raise CommandError(str(exc), returncode=EXIT_USAGE) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(mapping, indent=2, ensure_ascii=False, default=str))
        else:
            for line in render_text(mapping):
                self.stdout.write(line)

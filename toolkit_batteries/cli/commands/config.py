"""``toolkit config show``: the resolved configuration, redacted.

Inside a project the layers are its ``settings.TOOLKIT`` plus the environment; outside
one, the built-in defaults plus the environment. The only display path is
:meth:`~toolkit_batteries.core.config.Config.redacted_services`, so declared secrets, URL
passwords and credential-looking values never reach the terminal. An invalid
configuration exits 3 with the toolkit's message, which names the service and field and
never the value.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..output import InvalidInputError, Output, Result, UsageError
from ..parser import CommandParser

DESCRIPTION = """\
Show the resolved configuration of every service (or one), redacted: inside a project its
settings.TOOLKIT plus the environment, outside one the built-in defaults plus the
environment. Secrets are never printed."""

EPILOG = """\
examples:
  toolkit config show
  toolkit config show --service cache
  CACHE__DEFAULT__ADAPTER=kvserver toolkit config show --service cache --format json"""


def configure(parser: CommandParser) -> None:
    """Add the ``show`` subcommand."""
    sub = parser.add_subparsers(dest="subcommand", metavar="<subcommand>")
    show = sub.add_parser(
        "show",
        help="print the resolved configuration, redacted",
        description=DESCRIPTION,
    )
    from toolkit_batteries.core.config_display import add_show_flags

    add_show_flags(show)
    show.set_defaults(handler=run_show)


def run(args: argparse.Namespace, out: Output) -> Result:
    """Without a subcommand there is nothing to do."""
    raise UsageError("missing subcommand (want: show)")


def load_config() -> tuple[Any, str]:
    """Load the configuration the current directory sees; return it and where it came from.

    Raise :class:`InvalidInputError` (exit 3) when it does not load.
    """
    from ..project import find_project, setup_django

    project = find_project()
    source = "defaults + environment"
    if project is not None:
        setup_django(project)
        source = f"{project.settings_module} + environment"
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.errors import ConfigurationError

    try:
        if project is None:
            return Config.load(None), source
        from django.conf import settings

        return Config.load(getattr(settings, "TOOLKIT", None) or {}), source
    except ConfigurationError as exc:
        raise InvalidInputError(f"invalid configuration: {exc}") from None


def run_show(args: argparse.Namespace, out: Output) -> Result:
    """Print the redacted configuration."""
    from toolkit_batteries.core.config_display import (
        UnknownServiceError,
        render_text,
        select,
        shown_services,
    )

    config, source = load_config()
    mapping = shown_services(config)
    if not args.service and not mapping.get("plugins"):
        mapping.pop("plugins", None)
    try:
        mapping = select(mapping, args.service)
    except UnknownServiceError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        out.line(json.dumps(mapping, indent=2, ensure_ascii=False, default=str))
    else:
        out.line(f"# configuration: {source} (secrets redacted)")
        for line in render_text(mapping):
            out.line(line)
    return Result(data=mapping)

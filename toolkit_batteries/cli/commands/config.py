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
    show.add_argument(
        "--service",
        action="append",
        default=None,
        metavar="NAME",
        help="show only this service (repeatable; `plugins` for the plugin blocks)",
    )
    show.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (one adapter header per service) or json (the redacted mapping)",
    )
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


def select(mapping: dict[str, Any], names: list[str] | None) -> dict[str, Any]:
    """Keep the requested services (canonical or case-insensitive names)."""
    if not names:
        return mapping
    from toolkit_batteries.core.errors import did_you_mean

    folded = {key.lower().replace("_", ""): key for key in mapping}
    chosen: dict[str, Any] = {}
    for name in names:
        key = folded.get(name.strip().lower().replace("_", ""))
        if key is None:
            raise UsageError(f"unknown service {name!r}{did_you_mean(name, mapping)}")
        chosen[key] = mapping[key]
    return chosen


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value if value else '""'
    return json.dumps(value, ensure_ascii=False, default=str)


def _lines(options: dict[str, Any], indent: str) -> list[str]:
    lines: list[str] = []
    for key, value in options.items():
        if isinstance(value, dict) and value:
            lines.append(f"{indent}{key}:")
            lines.extend(_lines(value, indent + "  "))
        else:
            lines.append(f"{indent}{key}: {_scalar(value)}")
    return lines


def render_text(mapping: dict[str, Any]) -> list[str]:
    """Return the text form: ``service[/instance] (adapter)`` then indented options."""
    lines: list[str] = []
    for service, instances in mapping.items():
        if service == "plugins":
            for plugin, plugin_instances in instances.items():
                lines.extend(_block(f"plugins.{plugin}", plugin_instances))
            continue
        lines.extend(_block(service, instances))
    return lines


def _block(name: str, instances: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    ordered = sorted(instances, key=lambda i: (i != "default", i))
    for instance in ordered:
        body = instances[instance]
        label = name if instance == "default" else f"{name}/{instance}"
        lines.append(f"{label} ({body['adapter']})")
        lines.extend(_lines(body.get("options") or {}, "  "))
    return lines


def run_show(args: argparse.Namespace, out: Output) -> Result:
    """Print the redacted configuration."""
    config, source = load_config()
    mapping = config.redacted_services()
    if not args.service and not mapping.get("plugins"):
        mapping.pop("plugins", None)
    mapping = select(mapping, args.service)
    if args.format == "json":
        out.line(json.dumps(mapping, indent=2, ensure_ascii=False, default=str))
    else:
        out.line(f"# configuration: {source} (secrets redacted)")
        for line in render_text(mapping):
            out.line(line)
    return Result(data=mapping)

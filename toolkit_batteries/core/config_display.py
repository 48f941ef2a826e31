"""How ``toolkit config show`` and ``manage.py config_show`` display a configuration.

Both commands call this module (never each other; ``tests/test_layout.py``): the flags,
the ``--service`` selection and the text form are declared once here. The mapping it
displays is always :meth:`~toolkit_batteries.core.config.Config.redacted_services`, so
nothing here sees a secret.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["UnknownServiceError", "add_show_flags", "render_text", "select"]


class UnknownServiceError(ValueError):
    """``--service`` names a service the configuration does not have (a usage error)."""


def add_show_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--service`` (repeatable) and ``--format``."""
    parser.add_argument(
        "--service",
        action="append",
        default=None,
        metavar="NAME",
        help="show only this service (repeatable; `plugins` for the plugin blocks)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (one adapter header per service) or json (the redacted mapping)",
    )


def select(mapping: dict[str, Any], names: list[str] | None) -> dict[str, Any]:
    """Keep the requested services (canonical or case-insensitive names).

    Raises :class:`UnknownServiceError` (a usage error: exit 2) for a name not there.
    """
    if not names:
        return mapping
    from toolkit_batteries.core.errors import did_you_mean

    folded = {key.lower().replace("_", ""): key for key in mapping}
    chosen: dict[str, Any] = {}
    for name in names:
        key = folded.get(name.strip().lower().replace("_", ""))
        if key is None:
            raise UnknownServiceError(f"unknown service {name!r}{did_you_mean(name, mapping)}")
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

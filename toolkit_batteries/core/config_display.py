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

__all__ = [
    "UnknownServiceError",
    "add_show_flags",
    "product_name",
    "render_text",
    "select",
    "shown_services",
]

#: Where a value the configuration did not set comes from.
DEFAULT_SOURCE = "default"
#: The key of an instance's ``sources`` that names where its adapter came from.
ADAPTER_SOURCE = "@adapter"
#: Services whose ``url`` takes precedence over ``addr`` (the others' ``kvserver.url`` is
#: reserved and ignored, so ``kvserver.addr`` is always the one used).
_URL_WINS = ("cache", "lock", "queue")


def product_name(adapter: str, service: str | None = None) -> str:
    """Return the product an adapter talks to (``sqlserver`` -> ``postgres``), else itself.

    Read from the catalog's row of ``service``; without a service, the product every row
    that has this adapter agrees on (adapters are named the same across batteries).
    """
    from toolkit_batteries.core.catalog import SERVICES

    specs = [SERVICES[service]] if service in SERVICES else SERVICES.values()
    shown = {spec.product(adapter) for spec in specs if adapter in spec.products}
    return shown.pop() if len(shown) == 1 else adapter


def shown_services(config: Any) -> dict[str, Any]:
    """Return the redacted mapping ``config show`` prints, with where each value came from.

    Each instance gains ``sources`` (``"@adapter"`` or a dotted option -> the layer that
    set it: ``settings.TOOLKIT``, an environment variable, ``TOOLKIT_REDIS_URL`` ...;
    absent means the built-in default) and, for a ``kvserver`` instance, ``uses``: the
    option that names the server (``url`` or ``addr``).
    """
    mapping = config.redacted_services()
    for service, instances in mapping.items():
        if service == "plugins":
            continue
        for instance, body in instances.items():
            resolved = config.service(service, instance)
            body["sources"] = dict(resolved.sources)
            used = _address_used(service, resolved)
            if used:
                body["uses"] = used
    return mapping


def _address_used(service: str, resolved: Any) -> str:
    """Return ``url``, ``addr`` or ``kvserver.addr`` for a kvserver instance, else ``""``."""
    if resolved.adapter.strip().lower() not in ("kvserver", "redis"):
        return ""
    options = resolved.options
    if hasattr(options, "addr"):
        if service in _URL_WINS and str(getattr(options, "url", "") or "").strip():
            return "url"
        return "addr"
    return "kvserver.addr" if hasattr(getattr(options, "kvserver", None), "addr") else ""


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


def _lines(
    options: dict[str, Any],
    indent: str,
    sources: dict[str, str] | None = None,
    uses: str = "",
    prefix: str = "",
) -> list[str]:
    sources = sources or {}
    lines: list[str] = []
    for key, value in options.items():
        path = prefix + key
        if isinstance(value, dict) and value:
            lines.append(f"{indent}{key}:")
            lines.extend(_lines(value, indent + "  ", sources, uses, path + "."))
            continue
        notes = [sources[path]] if path in sources else []
        if uses and path.rpartition(".")[2] in ("addr", "url"):
            if path == uses:
                notes = [*(notes or [DEFAULT_SOURCE]), "used"]
            else:
                notes = [*(notes or [DEFAULT_SOURCE]), f"unused: {uses} is used"]
        suffix = f"  [{'; '.join(notes)}]" if notes else ""
        lines.append(f"{indent}{key}: {_scalar(value)}{suffix}")
    return lines


def render_text(mapping: dict[str, Any]) -> list[str]:
    """Return the text form: ``service[/instance] (adapter)`` then indented options.

    The adapter is shown by its product name (``postgres``, ``redis``); a value that
    did not come from the built-in defaults ends with ``[its source]``, and the server
    address of a kvserver instance says whether it is the one ``used``.
    """
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
        sources = body.get("sources") or {}
        adapter_note = f"  [{sources[ADAPTER_SOURCE]}]" if ADAPTER_SOURCE in sources else ""
        lines.append(f"{label} ({product_name(body['adapter'], name)}){adapter_note}")
        lines.extend(_lines(body.get("options") or {}, "  ", sources, body.get("uses", "")))
    return lines

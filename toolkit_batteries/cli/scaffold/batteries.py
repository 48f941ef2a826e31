"""The battery catalog as ``new`` and ``add`` see it: adapters, apps and pip extras.

The 37 services and their adapters come from :mod:`toolkit_batteries.core.catalog` and
the batteries' own adapter tables (:func:`~toolkit_batteries.core.loading.adapter_table`),
so a new adapter shows up here without touching the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..output import InvalidInputError

__all__ = [
    "Battery",
    "all_batteries",
    "extra_for",
    "find_battery",
    "resolve_adapter_name",
    "split_spec",
]

#: The pip extra each adapter family needs (pyproject ``[project.optional-dependencies]``);
#: an adapter not listed needs none. Battery-wide extras come second.
_EXTRA_BY_ADAPTER = {
    "kvserver": "kvserver",
    "sqlserver": "sqlserver",
    "sqlvector": "sqlserver",
    "objstore": "objstore",
    "objstore_b": "objstore",
    "otlp": "otlp",
}
_EXTRA_BY_BATTERY = {"auth": "auth", "password": "auth", "crypto": "auth"}


@dataclass(frozen=True)
class Battery:
    """One service of the catalog and what this release implements of it."""

    name: str
    #: The catalog's adapters, default first.
    adapters: tuple[str, ...]
    #: The canonical adapters that have an implementation (the adapter table).
    implemented: tuple[str, ...]
    #: Accepted aliases (``redis`` -> ``kvserver``).
    aliases: dict[str, str]
    #: Whether the battery is a Django app (has ``apps.py``) to list in INSTALLED_APPS.
    app: bool
    #: Canonical adapter -> the product it talks to, from the catalog (``kvserver`` -> ``redis``).
    products: dict[str, str] = field(default_factory=dict)

    def shown_adapters(self) -> list[str]:
        """Return the adapters as a reader looks for them: products first (``redis (kvserver)``)."""
        names = self.implemented or self.adapters
        with_product = [f"{self.products[a]} ({a})" for a in names if a in self.products]
        return with_product + [a for a in names if a not in self.products]

    @property
    def default(self) -> str:
        """Return the adapter ``add`` picks when none is given."""
        if self.adapters[0] in self.implemented or not self.implemented:
            return self.adapters[0]
        return self.implemented[0]

    @property
    def app_name(self) -> str:
        """Return the INSTALLED_APPS entry (``toolkit_batteries.cache``)."""
        return f"toolkit_batteries.{self.name}"


def _battery(name: str) -> Battery:
    import toolkit_batteries
    from toolkit_batteries.core.catalog import SERVICES
    from toolkit_batteries.core.loading import adapter_table

    spec = SERVICES[name]
    table = adapter_table(name)
    aliases = {alias: target for alias, target in table.names.items() if alias != target}
    app = (Path(toolkit_batteries.__file__).parent / name / "apps.py").is_file()
    products = {adapter: spec.product(adapter) or "" for adapter in spec.products}
    return Battery(name, spec.adapters, tuple(table.adapters), aliases, app, products)


def all_batteries() -> list[Battery]:
    """Return every battery of the catalog, by name."""
    from toolkit_batteries.core.catalog import SERVICES

    return [_battery(name) for name in sorted(SERVICES)]


def find_battery(name: str) -> Battery | None:
    """Return the battery ``name`` names (matched as configuration does: case, ``_``, ``-``)."""
    from toolkit_batteries.core.catalog import SERVICES
    from toolkit_batteries.core.options import normalize

    folded = normalize(name)
    for service in SERVICES:
        if normalize(service) == folded:
            return _battery(service)
    return None


def split_spec(spec: str, adapter: str | None) -> tuple[str, str | None]:
    """Split ``battery[/adapter]``; a different ``--adapter`` is a usage error (exit 2)."""
    from ..output import UsageError

    battery, sep, inline = spec.partition("/")
    battery, inline = battery.strip(), inline.strip()
    if sep and not inline:
        raise UsageError(f"invalid battery {spec!r}: write battery/adapter, e.g. cache/redis")
    if inline and adapter and inline != adapter:
        raise UsageError(f"{spec!r} and --adapter {adapter!r} name different adapters")
    return battery, (inline or adapter or None)


def resolve_adapter_name(battery: Battery, adapter: str | None) -> str:
    """Return the canonical adapter for ``adapter`` (``redis`` -> ``kvserver``), or exit 3.

    No adapter means the battery's default. A dotted path (``adapters.cache.acme.Acme``) is
    the loading rule for third-party adapters and is kept as written.
    """
    from toolkit_batteries import __version__
    from toolkit_batteries.core.errors import did_you_mean

    if not battery.implemented:
        raise InvalidInputError(
            f"battery {battery.name!r} has no adapters implemented in release {__version__} "
            f"(planned: {', '.join(battery.adapters)})",
            hint="`toolkit new --list-batteries` shows what is implemented",
        )
    if adapter is None:
        return battery.default
    text = adapter.strip()
    if "." in text:
        return text
    folded = text.lower()
    if folded in battery.implemented:
        return folded
    if folded in battery.aliases:
        return battery.aliases[folded]
    valid = sorted(battery.implemented) + sorted(battery.aliases)
    planned = [
        a for a in battery.adapters if a not in battery.implemented and a not in battery.aliases
    ]
    note = f"; planned, not implemented yet: {', '.join(planned)}" if folded in planned else ""
    raise InvalidInputError(
        f"unknown adapter {adapter!r} for {battery.name}{did_you_mean(folded, valid)}"
        f" (valid: {', '.join(valid)}){note}"
    )


def extra_for(battery: str, adapter: str) -> str | None:
    """Return the pip extra ``adapter`` of ``battery`` needs, or ``None``."""
    return _EXTRA_BY_ADAPTER.get(adapter) or _EXTRA_BY_BATTERY.get(battery)

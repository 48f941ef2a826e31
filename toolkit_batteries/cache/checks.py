"""System checks of the ``cache`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_cache.E001`` (each instance's adapter resolves):

* ``toolkit_cache.E002``: ``kvserver`` with an ``addr``/``url`` that does not parse, or
  ``require_tls`` on an address that would connect in plaintext.
* ``toolkit_cache.E003``: ``db`` with a ``dsn`` that is not a SQL target.
* ``toolkit_cache.E004``: ``max_entries`` or ``sweep_interval`` is negative.
* ``toolkit_cache.W001``: the legacy ``options.adapter`` is set; it is ignored in favour
  of the outer ``adapter``.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances, sql_target_error
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import resolve_kv_address

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``cache`` instance's connection settings and bounds."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "cache"):
        where, options = f"cache.{cfg.instance}", cfg.options
        if adapter == "kvserver":
            try:
                resolve_kv_address("cache", options, instance=cfg.instance, url=options.url)
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="use host:port or a redis:// / rediss:// URL; "
                        "require_tls needs tls or a rediss:// URL",
                        obj=_OBJ,
                        id="toolkit_cache.E002",
                    )
                )
        if adapter == "db" and (
            error := sql_target_error(
                where,
                options.dsn,
                hint="use a postgres:// URL, a libpq string or a SQLite file path",
                check_id="toolkit_cache.E003",
            )
        ):
            found.append(error)
        for field in ("max_entries", "sweep_interval"):
            value = getattr(options, field)
            if (value.total_seconds() if hasattr(value, "total_seconds") else value) < 0:
                found.append(
                    checks.Error(
                        f'{where}: option "{field}" is negative',
                        hint="use a positive value, or leave it unset for the default",
                        obj=_OBJ,
                        id="toolkit_cache.E004",
                    )
                )
        if options.adapter.strip():
            found.append(
                checks.Warning(
                    f'{where}: option "adapter" is a legacy duplicate and is ignored',
                    hint='set the adapter outside "options": {"adapter": ..., "options": {...}}',
                    obj=_OBJ,
                    id="toolkit_cache.W001",
                )
            )
    return found

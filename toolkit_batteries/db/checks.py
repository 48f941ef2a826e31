"""Behaviour checks of ``db``; every ID is in docs/batteries/db.md, "Checks".

``E002``/``E003``: the DSN or path resolves as the adapter opens it; ``W001``: pool
bounds. Messages name instances and fields, never values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import error, warning
from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``db`` instance's DSN or path and its pool sizes."""
    from toolkit_batteries.core.loading import resolve_adapter

    from .adapters.sqlfile import sqlfile_target
    from .adapters.sqlserver import sqlserver_target

    found: list[checks.CheckMessage] = []
    for instance in config.instances("db"):
        cfg = config.service("db", instance)
        where = f"db.{cfg.instance}"
        try:
            adapter, _ = resolve_adapter("db", cfg.adapter)
        except ConfigurationError:
            continue  # toolkit_db.E001 reports it
        try:
            if adapter == "sqlserver":
                sqlserver_target(cfg.options, instance=cfg.instance)
            elif adapter == "sqlfile":
                sqlfile_target(cfg.options, instance=cfg.instance)
        except InvalidOptionsError as exc:
            missing = adapter == "sqlserver" and exc.field == "dsn" and "required" in exc.reason
            hint = (
                f"set options.dsn in TOOLKIT['db'] or the DB__{cfg.instance.upper()}__DSN variable"
                if missing
                else "use the sqlfile adapter for a file and sqlserver for a PostgreSQL DSN"
            )
            check_id = "toolkit_db.E002" if missing else "toolkit_db.E003"
            found.append(error(check_id, str(exc), hint))
            continue
        options = cfg.options
        if adapter == "sqlserver" and 0 < options.max_conns < options.min_conns:
            found.append(
                warning(
                    "toolkit_db.W001",
                    f"{where}: max_conns is below min_conns; the pool keeps at most max_conns open",
                    "raise max_conns to at least min_conns, or lower min_conns",
                )
            )
    return found

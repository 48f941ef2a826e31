"""System checks of the ``session`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after
its ``toolkit_session.E001`` (the adapter resolves):

* ``toolkit_session.E002``: the ``kvserver`` adapter's connection block is unusable
  (``kvserver.addr`` does not parse, or ``require_tls`` with a plaintext address).
* ``toolkit_session.E003``: the ``db`` adapter's ``dsn`` is not a SQL target.

Messages name instances and fields, never values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``session`` instance's connection settings."""
    from toolkit_batteries.core.checks import resolved_instances, sql_target_error
    from toolkit_batteries.core.pools import resolve_kv_address

    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "session"):
        options = cfg.options
        if adapter == "kvserver":
            try:
                resolve_kv_address("session", options.kvserver, instance=cfg.instance)
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc).replace('option "', 'option "kvserver.', 1),
                        hint="set kvserver.addr to host:port or a redis:// URL",
                        obj=_OBJ,
                        id="toolkit_session.E002",
                    )
                )
        elif adapter == "db" and (
            error := sql_target_error(
                f"session.{cfg.instance}",
                options.dsn,
                hint="use a postgres:// URL or a SQLite file path, or leave dsn empty "
                "to borrow the db service",
                check_id="toolkit_session.E003",
            )
        ):
            found.append(error)
    return found

"""System checks of the ``idempotency`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_idempotency.E001`` (each instance's adapter resolves):

* ``toolkit_idempotency.E002``: ``kvserver`` with a ``kvserver.addr`` that does not
  parse, or ``kvserver.require_tls`` on an address that would connect in plaintext.
* ``toolkit_idempotency.E003``: ``db`` with a ``dsn`` that is not a SQL target.
* ``toolkit_idempotency.E004``: ``ttl`` or ``max_entries`` is negative.
* ``toolkit_idempotency.W001``: ``kvserver.url`` is set; the spec reserves it and it is
  ignored (set ``kvserver.addr``, which also takes a ``redis://`` URL).

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import (
    reserved_kv_url_warning,
    resolved_instances,
    sql_target_error,
)
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import resolve_kv_address

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``idempotency`` instance's connection settings and bounds."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "idempotency"):
        where, options = f"idempotency.{cfg.instance}", cfg.options
        if adapter == "kvserver":
            try:
                resolve_kv_address("idempotency", options.kvserver, instance=cfg.instance)
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc).replace('option "', 'option "kvserver.', 1),
                        hint="use host:port or a redis:// / rediss:// URL in kvserver.addr; "
                        "kvserver.require_tls needs kvserver.tls or a rediss:// URL",
                        obj=_OBJ,
                        id="toolkit_idempotency.E002",
                    )
                )
            if warning := reserved_kv_url_warning(
                where,
                options.kvserver,
                hint="set kvserver.addr (it also accepts a redis:// URL)",
                check_id="toolkit_idempotency.W001",
            ):
                found.append(warning)
        if adapter == "db" and (
            error := sql_target_error(
                where,
                options.dsn,
                hint="use a postgres:// URL, a libpq string or a SQLite file path",
                check_id="toolkit_idempotency.E003",
            )
        ):
            found.append(error)
        for field, value in (
            ("ttl", options.ttl.total_seconds()),
            ("max_entries", options.max_entries),
        ):
            if value < 0:
                found.append(
                    checks.Error(
                        f'{where}: option "{field}" is negative',
                        hint="use a positive value, or leave it unset for the default",
                        obj=_OBJ,
                        id="toolkit_idempotency.E004",
                    )
                )
    return found

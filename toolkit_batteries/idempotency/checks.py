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

from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError
from toolkit_batteries.core.pools import parse_sql_target, resolve_kv_address

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``idempotency`` instance's connection settings and bounds."""
    from toolkit_batteries.core.loading import resolve_adapter

    found: list[checks.CheckMessage] = []
    for instance in config.instances("idempotency"):
        cfg = config.service("idempotency", instance)
        where, options = f"idempotency.{cfg.instance}", cfg.options
        try:
            adapter, _ = resolve_adapter("idempotency", cfg.adapter)
        except ConfigurationError:
            continue  # toolkit_idempotency.E001 reports it
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
            if options.kvserver.url.strip():
                found.append(
                    checks.Warning(
                        f'{where}: option "kvserver.url" is reserved and ignored',
                        hint="set kvserver.addr (it also accepts a redis:// URL)",
                        obj=_OBJ,
                        id="toolkit_idempotency.W001",
                    )
                )
        if adapter == "db" and options.dsn.strip():
            try:
                parse_sql_target(options.dsn)
            except ValueError as exc:
                found.append(
                    checks.Error(
                        f'{where}: option "dsn" {exc}',
                        hint="use a postgres:// URL, a libpq string or a SQLite file path",
                        obj=_OBJ,
                        id="toolkit_idempotency.E003",
                    )
                )
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

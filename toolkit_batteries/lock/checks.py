"""System checks of the ``lock`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_lock.E001`` (each instance's adapter resolves):

* ``toolkit_lock.E002``: ``kvserver`` with an ``addr``/``url`` that does not parse, or
  ``require_tls`` on an address that would connect in plaintext.
* ``toolkit_lock.E003``: ``ttl``, ``retry_interval`` or ``max_entries`` is negative.
* ``toolkit_lock.W001``: ``retry_interval`` is not shorter than ``ttl``: a waiting
  caller would sleep through a whole lease between attempts.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import resolve_kv_address

from .base import DEFAULT_RETRY_INTERVAL, DEFAULT_TTL

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``lock`` instance's connection settings and durations."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "lock"):
        where, options = f"lock.{cfg.instance}", cfg.options
        if adapter == "kvserver":
            try:
                resolve_kv_address("lock", options, instance=cfg.instance, url=options.url)
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="use host:port or a redis:// / rediss:// URL; "
                        "require_tls needs tls or a rediss:// URL",
                        obj=_OBJ,
                        id="toolkit_lock.E002",
                    )
                )
        ttl = options.ttl.total_seconds()
        retry = options.retry_interval.total_seconds()
        for field, value in (
            ("ttl", ttl),
            ("retry_interval", retry),
            ("max_entries", options.max_entries),
        ):
            if value < 0:
                found.append(
                    checks.Error(
                        f'{where}: option "{field}" is negative',
                        hint="use a positive value, or leave it unset for the default",
                        obj=_OBJ,
                        id="toolkit_lock.E003",
                    )
                )
        if (retry if retry > 0 else DEFAULT_RETRY_INTERVAL) >= (ttl if ttl > 0 else DEFAULT_TTL):
            found.append(
                checks.Warning(
                    f'{where}: option "retry_interval" is not shorter than "ttl"',
                    hint="make retry_interval a small fraction of ttl",
                    obj=_OBJ,
                    id="toolkit_lock.W001",
                )
            )
    return found

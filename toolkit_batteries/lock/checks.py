"""System checks of the ``lock`` battery (``manage.py check``).

Shape rules (E002, E003) are declared on the options and reported by the core check;
:func:`battery_checks` adds the behaviour check (W001):

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

from .base import DEFAULT_RETRY_INTERVAL, DEFAULT_TTL

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Warn where a waiting caller would sleep through a whole lease between attempts."""
    found: list[checks.CheckMessage] = []
    for cfg, _ in resolved_instances(config, "lock"):
        ttl = cfg.options.ttl.total_seconds()
        retry = cfg.options.retry_interval.total_seconds()
        if (retry if retry > 0 else DEFAULT_RETRY_INTERVAL) >= (ttl if ttl > 0 else DEFAULT_TTL):
            found.append(
                checks.Warning(
                    f'lock.{cfg.instance}: option "retry_interval" is not shorter than "ttl"',
                    hint="make retry_interval a small fraction of ttl",
                    obj=_OBJ,
                    id="toolkit_lock.W001",
                )
            )
    return found

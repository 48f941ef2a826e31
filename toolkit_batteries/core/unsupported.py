"""Options the spec lists and this toolkit cannot honour: refused, never accepted and ignored.

``toolkit_batteries.E021`` (``manage.py check``, so ``toolkit serve`` refuses to start)
names the service, instance and field of each one set away from its default:

* ``min_idle_conns`` and ``max_conn_lifetime`` on a ``kvserver`` instance (flat, or in
  its ``kvserver`` block): redis-py's connection pool opens connections on demand and
  has no lifetime limit, so neither can be kept (``pool_size``, ``pool_timeout`` and
  ``max_conn_idle_time`` are).
* ``capacity`` on a ``cache`` instance: a sizing hint for a Go map; ``max_entries``
  bounds the ``memory`` cache, and a server bounds its own.

Messages name fields, never values.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from django.core import checks

if TYPE_CHECKING:
    from django.apps import AppConfig

__all__ = ["UNSUPPORTED", "check_unsupported_options", "unsupported_fields"]

#: field -> (why it cannot be honoured, what to do instead).
UNSUPPORTED: dict[str, tuple[str, str]] = {
    "min_idle_conns": (
        "redis-py opens pool connections on demand and keeps no idle minimum",
        "remove it (pool_size bounds the pool)",
    ),
    "max_conn_lifetime": (
        "redis-py's pool has no connection lifetime limit",
        "remove it (max_conn_idle_time checks idle connections before reuse)",
    ),
}
_CACHE_CAPACITY = (
    "it is a sizing hint with no equivalent here",
    "remove it (max_entries bounds the memory cache)",
)


def _defaults(options: Any) -> Any:
    return type(options)()


def unsupported_fields(service: str, adapter: str, options: Any) -> Iterator[tuple[str, str, str]]:
    """Yield (field, reason, hint) for each unsupported option set away from its default."""
    if service == "cache" and getattr(options, "capacity", 0):
        yield ("capacity", *_CACHE_CAPACITY)
    if adapter != "kvserver":
        return
    blocks = [("", options)]
    block = getattr(options, "kvserver", None)
    if block is not None and hasattr(block, "min_idle_conns"):
        blocks.append(("kvserver.", block))
    for prefix, holder in blocks:
        if not hasattr(holder, "min_idle_conns"):
            continue
        defaults = _defaults(holder)
        for field, (reason, hint) in UNSUPPORTED.items():
            if getattr(holder, field) != getattr(defaults, field):
                yield (f"{prefix}{field}", reason, hint)


def check_unsupported_options(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """``toolkit_batteries.E021``: an option that would be accepted and ignored."""
    from .catalog import SERVICES
    from .checks import resolved_instances, toolkit_settings
    from .config import Config
    from .errors import ConfigurationError

    try:
        config = Config.load(toolkit_settings(), os.environ)
    except ConfigurationError:
        return []  # toolkit_batteries.E001 reports it
    found: list[checks.CheckMessage] = []
    for service in SERVICES:
        for cfg, adapter in resolved_instances(config, service):
            for field, reason, hint in unsupported_fields(service, adapter, cfg.options):
                found.append(
                    checks.Error(
                        f'{service}.{cfg.instance}: option "{field}" is not supported: {reason}',
                        hint=hint,
                        obj="settings.TOOLKIT",
                        id="toolkit_batteries.E021",
                    )
                )
    return found

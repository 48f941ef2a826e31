"""Behaviour check of ``log``; every ID is in docs/batteries/log.md, "Checks".

``W001``: the ``pretty`` adapter while ``DEBUG`` is False (log collectors want ``slog``).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from django.core import checks

from toolkit_batteries.core.checks import warning
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.core.loading import resolve_adapter

__all__ = ["battery_checks"]


def battery_checks(config: Config) -> Iterator[checks.CheckMessage]:
    """Warn about each ``pretty`` instance outside development."""
    if settings.DEBUG:
        return
    for instance in config.instances("log"):
        try:
            adapter, _ = resolve_adapter("log", config.service("log", instance).adapter)
        except ConfigurationError:  # reported as toolkit_log.E001
            continue
        if adapter == "pretty":
            yield warning(
                "toolkit_log.W001",
                f'log.{instance}: the "pretty" adapter is configured while DEBUG is False',
                'Pretty output is for terminals; use "slog" or "log_b" in production.',
            )

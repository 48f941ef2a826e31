"""Behaviour checks of ``storage``; every ID is in docs/batteries/storage.md, "Checks".

Shape rules (endpoint, account id, key pair, policy sync) are declared on the options.
Here: ``W003`` (``local`` with no root and no ``MEDIA_ROOT``) and ``E004`` (a ``policy``
this release does not read). Nothing connects; messages name fields, never values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from toolkit_batteries.core.checks import error, resolved_instances, warning
from toolkit_batteries.core.errors import ConfigurationError

from .policy import AccessPolicy

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


def battery_checks(config: Config) -> list[CheckMessage]:
    """Check every ``storage`` instance's root and access policy (nothing connects)."""
    found: list[CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "storage"):
        options = cfg.options
        if adapter == "local" and not (options.root or getattr(settings, "MEDIA_ROOT", "")):
            found.append(
                warning(
                    "toolkit_storage.W003",
                    f'storage.{cfg.instance}: option "root" is empty and MEDIA_ROOT is not set; '
                    "opening storage will fail until one is set",
                    "set root (or MEDIA_ROOT) to the directory objects live under",
                )
            )
        try:
            AccessPolicy(options.policy, instance=cfg.instance)
        except ConfigurationError as exc:
            found.append(error("toolkit_storage.E004", str(exc), 'use version "0" or "1"'))
    return found

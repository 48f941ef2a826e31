"""Behaviour checks of ``secrets``; every ID is in docs/batteries/secrets.md, "Checks".

Shape rules (prefix, token source, ignored options) are declared on the options. Here:
``E003``, the secretstore address and mount, by the rules the adapter opens with. Nothing
connects and no file is read; messages name fields, never values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit_batteries.core.checks import error, resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


def battery_checks(config: Config) -> list[CheckMessage]:
    """Check every ``secretstore`` instance's address and mount."""
    from .adapters.vault import check_addr, check_mount

    found: list[CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "secrets"):
        options = cfg.options
        if adapter != "secretstore":
            continue
        try:
            check_addr(
                options.addr,
                allow_insecure=bool(options.allow_insecure),
                allow_private=bool(options.allow_private),
                instance=cfg.instance,
            )
            check_mount(options.mount, cfg.instance)
        except InvalidOptionsError as exc:
            hint = (
                "addr is an https:// URL of the secrets server without credentials; "
                "allow_insecure permits http, allow_private private addresses"
            )
            found.append(error("toolkit_secrets.E003", str(exc), hint))
    return found

"""What the auth battery adds to the shared-state check (``toolkit_batteries.W020``/``E020``).

The kernel's :func:`~toolkit_batteries.core.topology.memory_findings` asks each battery
for its ``doctor.memory_findings(config)`` (:func:`~toolkit_batteries.core.catalog.
battery_hook`), so the kernel itself never imports this battery.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from toolkit_batteries.core.topology import Finding, _memory_instances

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["memory_findings"]


def memory_findings(config: Config) -> Iterator[Finding]:
    """Report jwt auth instances whose revoked token ids stay in this process."""
    from django.conf import settings

    from toolkit_batteries.core.checks import resolved_instances
    from toolkit_batteries.core.sidesettings import SideSettingError, read_side_setting

    try:
        from .revocation import REVOCATION, SETTING

        stores = read_side_setting(REVOCATION, getattr(settings, SETTING, None)) or {}
    except (ImportError, SideSettingError):
        return  # toolkit_auth.E004 reports a setting that does not parse
    memory_sessions = set(_memory_instances(config, "session"))
    for cfg, adapter in resolved_instances(config, "auth"):
        if adapter != "jwt":
            continue
        value = stores.get(cfg.instance, stores.get("*"))
        if isinstance(value, str) and value.startswith("session"):
            name = value.partition(":")[2] or "default"
            if name not in memory_sessions:
                continue
        elif value not in (None, "", "memory"):
            continue
        yield Finding(
            "auth",
            cfg.instance,
            "revoked tokens stay revoked in one process and keep working in the others",
            "TOOLKIT_AUTH_REVOCATION",
        )

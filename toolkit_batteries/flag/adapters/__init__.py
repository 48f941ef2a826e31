"""The flag adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so httpx and PyJWT cost
nothing to a project on the ``static`` adapter.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "static": "toolkit_batteries.flag.adapters.static.StaticFlag",
    "remotecfg": "toolkit_batteries.flag.adapters.remotecfg.RemoteConfigFlag",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {}

"""The secrets adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so hvac costs nothing to a
project on the ``env`` adapter. The vendor alias ``vault`` -> ``secretstore`` lives in the
shared ``VENDOR_ALIASES`` table of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "env": "toolkit_batteries.secrets.adapters.env.EnvSecrets",
    "secretstore": "toolkit_batteries.secrets.adapters.secretstore.SecretStoreSecrets",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers vault.
ALIASES: dict[str, str] = {}

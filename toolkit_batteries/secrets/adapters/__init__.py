"""The secrets adapters, by canonical name (default first, as in the catalog).

Modules are named after the product they talk to: ``secretstore`` is the KV v2 API of
HashiCorp Vault and OpenBao (``vault.py: VaultSecrets``). Values are dotted paths, imported
only when an adapter opens, so hvac costs nothing to a project on the ``env`` adapter. The
product names ``vault`` and ``openbao`` come from the battery's catalog row
(:mod:`toolkit_batteries.core.catalog`).
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "env": "toolkit_batteries.secrets.adapters.env.EnvSecrets",
    "secretstore": "toolkit_batteries.secrets.adapters.vault.VaultSecrets",
}

"""The secrets adapters: ``secretstore`` is the KV v2 API of HashiCorp Vault and OpenBao
(``vault.VaultSecrets``; aliases ``vault`` and ``openbao`` from the catalog row); hvac
costs nothing to a project on ``env``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "env.EnvSecrets secretstore=vault.VaultSecrets")

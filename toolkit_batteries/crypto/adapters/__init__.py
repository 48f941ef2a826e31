"""The crypto adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so ``cryptography`` costs
nothing to a project that never encrypts.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "local": "toolkit_batteries.crypto.adapters.local.LocalCrypto",
    "kms": "toolkit_batteries.crypto.adapters.kms.KMSCrypto",
}

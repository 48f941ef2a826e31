"""The crypto adapters; ``cryptography`` costs nothing to a project that never encrypts."""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "local.LocalCrypto kms.KMSCrypto")

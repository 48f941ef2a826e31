"""The ``crypto`` battery: authenticated encryption and signatures with rotatable keys.

Get the configured service from the registry (``services.crypto()``) or a container
(``container.crypto()``)::

    token = services.crypto().encrypt(b"secret", aad=b"user:7")
    services.crypto().decrypt(token, aad=b"user:7")

``local`` (default) keeps the keys in options; ``kms`` needs a client injected from code
with :func:`register_kms_client` and fails closed without one. ``cryptography`` is imported
only by the adapters.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Crypto,
        CryptoError,
        DecryptionError,
        InvalidSignatureError,
        UnknownKeyError,
        register_kms_client,
        unregister_kms_client,
    )

__all__ = [
    "Crypto",
    "CryptoError",
    "DecryptionError",
    "InvalidSignatureError",
    "UnknownKeyError",
    "register_kms_client",
    "unregister_kms_client",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Crypto": "base",
    "CryptoError": "base",
    "DecryptionError": "base",
    "InvalidSignatureError": "base",
    "UnknownKeyError": "base",
    "register_kms_client": "base",
    "unregister_kms_client": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

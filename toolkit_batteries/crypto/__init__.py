"""The ``crypto`` battery: authenticated encryption and signatures with rotatable keys.

Get the configured service from the registry (``services.crypto()``) or a container
(``container.crypto()``)::

    token = services.crypto().encrypt(b"secret", aad=b"user:7")
    services.crypto().decrypt(token, aad=b"user:7")

``local`` (default) keeps the keys in options; ``kms`` needs a client injected from code
with :func:`register_kms_client` and fails closed without one. ``cryptography`` is imported
only by the adapters.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "Crypto CryptoError DecryptionError InvalidSignatureError UnknownKeyError "
        "register_kms_client unregister_kms_client"
    ),
)

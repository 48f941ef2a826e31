"""The crypto service: authenticated encryption and signatures with rotatable keys.

Every adapter subclasses :class:`Crypto` and implements four operations::

    crypto = services.crypto()
    token = crypto.encrypt(b"4111 1111 1111 1111", aad=b"user:7")   # str, safe for a column
    crypto.decrypt(token, aad=b"user:7")                            # b"4111 1111 1111 1111"
    signature = crypto.sign(b"invoice 42")                          # str
    crypto.verify(b"invoice 42", signature)                         # None, or raises

Ciphertexts and signatures carry the id of the key that made them, so keys rotate
without re-encrypting anything at once: new data uses the active key, and data made
with a retired key still decrypts as long as that key stays listed. An unknown key id,
a tampered ciphertext, the wrong ``aad`` and a forged signature all fail closed with a
:class:`CryptoError` whose message holds no key material and no input.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import threading
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError, ToolkitError

__all__ = [
    "DEV_ENVIRONMENTS",
    "Crypto",
    "CryptoError",
    "DecryptionError",
    "InvalidSignatureError",
    "UnknownKeyError",
    "b64decode_any",
    "b64url",
    "b64url_decode",
    "dev_key_allowed",
    "parse_keyring",
    "register_kms_client",
    "registered_kms_client",
    "unregister_kms_client",
]

#: Values of ``TOOLKIT_ENV`` under which the public development key is accepted.
DEV_ENVIRONMENTS = frozenset({"dev", "test", "development"})
#: The environment variable that names the deployment environment (``<TOOL>_ENV``).
ENV_VARIABLE = "TOOLKIT_ENV"

_KID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class CryptoError(ToolkitError):
    """An operation was refused; the message never holds key material or input."""

    code = "crypto_error"


class DecryptionError(CryptoError, ValueError):
    """The ciphertext is malformed, tampered with, or bound to other associated data."""

    code = "decryption_failed"


class InvalidSignatureError(CryptoError, ValueError):
    """The signature is malformed or does not match the message."""

    code = "invalid_signature"


class UnknownKeyError(DecryptionError, InvalidSignatureError):
    """The ciphertext or signature names a key id that is not (or no longer) listed."""

    code = "unknown_key"


# --------------------------------------------------------------------------- encoding


def b64url(data: bytes) -> str:
    """Return unpadded URL-safe base64 of ``data``."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Decode unpadded URL-safe base64; raise ``ValueError`` on anything else."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        raise ValueError("not URL-safe base64")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not URL-safe base64") from None


def b64decode_any(text: str) -> bytes:
    """Decode standard or URL-safe base64, padded or not; raise ``ValueError`` otherwise."""
    cleaned = text.strip().rstrip("=").replace("-", "+").replace("_", "/")
    if not re.fullmatch(r"[A-Za-z0-9+/]*", cleaned):
        raise ValueError("not base64")
    try:
        return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not base64") from None


def derived_kid(key: bytes) -> str:
    """Return the key id of a key given without one: a short fingerprint of the key."""
    return "k" + hashlib.sha256(b"toolkit key id\x00" + key).hexdigest()[:12]


def parse_keyring(
    text: str, *, size: int, field: str, service: str = "crypto", instance: str = "default"
) -> list[tuple[str, bytes]]:
    """Parse a key option into ``[(kid, key), ...]``, the active key first.

    The option holds one key (base64 of ``size`` bytes) or a comma-separated list of
    ``kid:base64`` entries (a bare ``base64`` entry gets :func:`derived_kid`). Raise
    :class:`InvalidOptionsError` naming the field, never the value.
    """

    def invalid(reason: str) -> InvalidOptionsError:
        return InvalidOptionsError(service, field, reason, instance=instance)

    ring: list[tuple[str, bytes]] = []
    for position, entry in enumerate(part.strip() for part in text.split(",")):
        if not entry:
            raise invalid("has an empty entry (expected kid:base64 entries separated by commas)")
        kid, sep, encoded = entry.rpartition(":")
        if not sep:
            kid, encoded = "", entry
        try:
            key = b64decode_any(encoded)
        except ValueError:
            raise invalid(f"entry {position + 1} is not base64") from None
        if len(key) != size:
            raise invalid(f"entry {position + 1} must be base64 of {size} bytes")
        kid = kid.strip() or derived_kid(key)
        if not _KID.fullmatch(kid):
            raise invalid(f"entry {position + 1} has a key id that is not 1-64 of A-Z a-z 0-9 _ -")
        if any(kid == seen for seen, _ in ring):
            raise invalid("lists one key id twice")
        ring.append((kid, key))
    if not ring:
        raise invalid("is empty")
    return ring


def dev_key_allowed(allow_dev_key: bool, environ: Any = None) -> bool:
    """Tell whether the public development key may be used here.

    Only with ``allow_dev_key``, or when ``TOOLKIT_ENV`` is ``dev``, ``test`` or
    ``development`` (case and surrounding blanks ignored).
    """
    if allow_dev_key:
        return True
    env = os.environ if environ is None else environ
    return str(env.get(ENV_VARIABLE, "")).strip().lower() in DEV_ENVIRONMENTS


def as_bytes(value: bytes | str, what: str) -> bytes:
    """Return ``value`` as bytes (a ``str`` is UTF-8 encoded)."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise TypeError(f"{what} must be bytes or str")


# --------------------------------------------------------------------------- KMS clients

_kms_lock = threading.Lock()
_kms_clients: dict[str, Any] = {}


def register_kms_client(client: Any, *, instance: str = "default") -> None:
    """Inject the KMS client the ``kms`` adapter of ``instance`` uses.

    This is the only way to give the ``kms`` adapter a client: configuration alone never
    builds one, so a deployment cannot fall back to an unintended account or region. The
    client has the shape of boto3's KMS client (``generate_data_key``, ``encrypt``,
    ``decrypt``, ``generate_mac``, ``verify_mac``). Register before the service opens.
    """
    with _kms_lock:
        _kms_clients[instance] = client


def unregister_kms_client(instance: str = "default") -> None:
    """Forget the client injected for ``instance`` (services already open keep theirs)."""
    with _kms_lock:
        _kms_clients.pop(instance, None)


def registered_kms_client(instance: str = "default") -> Any:
    """Return the client injected for ``instance``, or None."""
    with _kms_lock:
        return _kms_clients.get(instance)


# --------------------------------------------------------------------------- interface


class Crypto(Service):
    """Interface of the crypto service."""

    service_name: ClassVar[str] = "crypto"

    def __init__(self, *, instance: str = "default") -> None:
        self.instance = instance

    def encrypt(self, plaintext: bytes | str, *, aad: bytes | str = b"") -> str:
        """Encrypt ``plaintext`` with the active key; ``aad`` is authenticated, not stored."""
        raise NotImplementedError

    def decrypt(self, token: str, *, aad: bytes | str = b"") -> bytes:
        """Return the plaintext of ``token``; raise :class:`DecryptionError` if refused."""
        raise NotImplementedError

    def sign(self, message: bytes | str) -> str:
        """Return a signature of ``message`` made with the active signing key."""
        raise NotImplementedError

    def verify(self, message: bytes | str, signature: str) -> None:
        """Return if ``signature`` matches ``message``; raise :class:`InvalidSignatureError`."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.service_name}.{self.instance}>"

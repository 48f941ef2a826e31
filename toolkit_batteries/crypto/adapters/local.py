"""The ``local`` adapter (default): AES-256-GCM and HMAC-SHA256 with keys from options.

``key`` holds the encryption keys, ``sign_key`` the signing keys; each is one key or a
comma-separated list of ``kid:base64`` entries, the active key first (see
:func:`~toolkit_batteries.crypto.base.parse_keyring`). Without ``sign_key``, each signing
key is derived from the encryption key of the same id with HKDF-SHA256, so one secret is
enough and rotating ``key`` rotates signing too.

Formats (both ASCII, safe in a text column, a URL or a header)::

    ciphertext  v1.<kid>.<base64url(nonce[12] || AES-GCM ciphertext || tag[16])>
    signature   v1.<kid>.<base64url(HMAC-SHA256(sign key, "v1.<kid>." || message))>

The ``v1.<kid>.`` header is authenticated (it is part of the GCM associated data, before
the caller's ``aad``, and of the HMAC input), so moving a ciphertext or signature to
another key id fails. Nonces are 96 random bits per message.

The deterministic development key (the ``key`` default) is refused unless
``allow_dev_key`` is set or ``TOOLKIT_ENV`` is ``dev``, ``test`` or ``development``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any, TypeVar

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.crypto.base import (
    Crypto,
    DecryptionError,
    InvalidSignatureError,
    UnknownKeyError,
    as_bytes,
    b64decode_any,
    b64url,
    b64url_decode,
    dev_key_allowed,
    parse_keyring,
)
from toolkit_batteries.crypto.options import DEVELOPMENT_KEY

with MissingExtraError.guard("crypto", "local", "auth", "cryptography"):
    from cryptography.exceptions import InvalidSignature, InvalidTag
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives import hmac as crypto_hmac
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["KEY_SIZE", "NONCE_SIZE", "SIGN_KEY_SIZE", "VERSION", "LocalCrypto"]

logger = logging.getLogger("toolkit.crypto")
_K = TypeVar("_K")

#: Format version written at the start of every ciphertext and signature.
VERSION = "v1"
#: AES-256 key size in bytes (the ``key`` option).
KEY_SIZE = 32
#: Signing key size in bytes (the ``sign_key`` option).
SIGN_KEY_SIZE = 64
#: AES-GCM nonce size in bytes.
NONCE_SIZE = 12
_TAG_SIZE = 16
_SIGN_INFO = b"toolkit crypto sign v1"


def derive_sign_key(key: bytes) -> bytes:
    """Return the 64-byte signing key HKDF-SHA256 derives from an encryption key."""
    return HKDF(algorithm=hashes.SHA256(), length=SIGN_KEY_SIZE, salt=None, info=_SIGN_INFO).derive(
        key
    )


class LocalCrypto(Crypto):
    """AES-256-GCM and HMAC-SHA256 with in-process keys, the first of each ring active."""

    adapter_name = "local"

    def __init__(
        self,
        keys: list[tuple[str, bytes]],
        sign_keys: list[tuple[str, bytes]] | None = None,
        *,
        instance: str = "default",
    ) -> None:
        """Build from ``[(kid, key)]`` rings, active key first.

        No development-key rule applies here: code that passes keys chose them. The rule
        guards configuration (:meth:`open`).
        """
        super().__init__(instance=instance)
        if not keys:
            raise ValueError("at least one encryption key is required")
        for _kid, key in keys:
            if len(key) != KEY_SIZE:
                raise ValueError(f"encryption keys must be {KEY_SIZE} bytes")
        if sign_keys is None:
            sign_keys = [(kid, derive_sign_key(key)) for kid, key in keys]
        if not sign_keys:
            raise ValueError("at least one signing key is required")
        self._active_kid = keys[0][0]
        self._ciphers: dict[str, Any] = {kid: AESGCM(key) for kid, key in keys}
        self._active_sign_kid = sign_keys[0][0]
        self._sign_keys: dict[str, bytes] = dict(sign_keys)

    @classmethod
    def open(cls, ctx: OpenContext) -> LocalCrypto:
        """Parse ``key`` and ``sign_key``; refuse the development key outside development."""
        options = ctx.options
        where = {"service": ctx.service, "instance": ctx.instance}
        keys = parse_keyring(options.key, size=KEY_SIZE, field="key", **where)
        dev_key = b64decode_any(DEVELOPMENT_KEY)
        if any(key == dev_key for _kid, key in keys):
            if not dev_key_allowed(options.allow_dev_key):
                raise InvalidOptionsError(
                    ctx.service,
                    "key",
                    "is the public development key, refused outside development: set a "
                    "real key (base64 of 32 random bytes), or TOOLKIT_ENV=dev/test/"
                    "development, or allow_dev_key",
                    instance=ctx.instance,
                )
            logger.warning(
                "%s.%s: using the public development key; never use it in production",
                ctx.service,
                ctx.instance,
            )
        sign_keys = None
        if options.sign_key.strip():
            sign_keys = parse_keyring(
                options.sign_key, size=SIGN_KEY_SIZE, field="sign_key", **where
            )
        return cls(keys, sign_keys, instance=ctx.instance)

    # ------------------------------------------------------------------ identity

    @property
    def active_kid(self) -> str:
        """Return the id of the key new ciphertexts use."""
        return self._active_kid

    @property
    def key_ids(self) -> tuple[str, ...]:
        """Return every encryption key id that still decrypts, the active one first."""
        return tuple(self._ciphers)

    @property
    def sign_key_ids(self) -> tuple[str, ...]:
        """Return every signing key id that still verifies, the active one first."""
        return tuple(self._sign_keys)

    # ------------------------------------------------------------------ encryption

    def encrypt(self, plaintext: bytes | str, *, aad: bytes | str = b"") -> str:
        """Encrypt with the active key; the result names the key and is ASCII."""
        data = as_bytes(plaintext, "plaintext")
        kid = self._active_kid
        header = f"{VERSION}.{kid}."
        nonce = os.urandom(NONCE_SIZE)
        sealed = self._ciphers[kid].encrypt(nonce, data, header.encode() + as_bytes(aad, "aad"))
        return header + b64url(nonce + sealed)

    def decrypt(self, token: str, *, aad: bytes | str = b"") -> bytes:
        """Decrypt with the key the token names; raise DecryptionError/UnknownKeyError."""
        extra = as_bytes(aad, "aad")
        kid, cipher, raw = _open(token, self._ciphers, DecryptionError, "ciphertext")
        if len(raw) < NONCE_SIZE + _TAG_SIZE:
            raise DecryptionError("crypto: malformed ciphertext")
        header = f"{VERSION}.{kid}.".encode()
        try:
            return cipher.decrypt(raw[:NONCE_SIZE], raw[NONCE_SIZE:], header + extra)
        except InvalidTag:
            raise DecryptionError(
                "crypto: the ciphertext was altered or the associated data differs"
            ) from None

    # ------------------------------------------------------------------ signatures

    def sign(self, message: bytes | str) -> str:
        """Sign with the active signing key; the result names the key and is ASCII."""
        kid = self._active_sign_kid
        return f"{VERSION}.{kid}." + b64url(self._mac(kid, as_bytes(message, "message")))

    def verify(self, message: bytes | str, signature: str) -> None:
        """Return if ``signature`` matches; raise InvalidSignatureError/UnknownKeyError."""
        data = as_bytes(message, "message")
        kid, key, mac = _open(signature, self._sign_keys, InvalidSignatureError, "signature")
        check = crypto_hmac.HMAC(key, hashes.SHA256())
        check.update(f"{VERSION}.{kid}.".encode() + data)
        try:
            check.verify(mac)
        except InvalidSignature:
            raise InvalidSignatureError("crypto: the signature does not match") from None

    def _mac(self, kid: str, data: bytes) -> bytes:
        mac = crypto_hmac.HMAC(self._sign_keys[kid], hashes.SHA256())
        mac.update(f"{VERSION}.{kid}.".encode() + data)
        return mac.finalize()


def _open(
    token: Any, keys: Mapping[str, _K], error: type[Exception], what: str
) -> tuple[str, _K, bytes]:
    """Return ``(kid, key, raw body)`` of a token whose key id is in ``keys``, or raise.

    Ciphertexts and signatures are read alike: the format first (``error``), then the key
    id (:class:`UnknownKeyError`), then the base64 body (``error``).
    """
    kid, body = _split(token, error, what)
    key = keys.get(kid)
    if key is None:
        raise UnknownKeyError(f"crypto: the {what} names a key id that is not listed")
    try:
        return kid, key, b64url_decode(body)
    except ValueError:
        raise error(f"crypto: malformed {what}") from None


def _split(token: Any, error: type[Exception], what: str) -> tuple[str, str]:
    """Return ``(kid, body)`` of a ``v1.<kid>.<body>`` token, or raise ``error``."""
    if not isinstance(token, str):
        raise error(f"crypto: the {what} must be a str")
    parts = token.split(".")
    if len(parts) != 3 or not parts[1]:
        raise error(f"crypto: malformed {what}")
    if parts[0] != VERSION:
        raise error(f"crypto: unsupported {what} format")
    return parts[1], parts[2]

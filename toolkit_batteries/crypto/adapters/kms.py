"""The ``kms`` adapter: keys that never leave a key-management service.

It fails closed from configuration: opening it raises a :class:`ConfigurationError`
unless a KMS client was injected from code with
:func:`~toolkit_batteries.crypto.register_kms_client` (boto3's ``kms`` client has the
right shape). ``key_id`` is required; it encrypts and signs. ``key_ids`` lists retired
key ids that still decrypt and verify during a rotation; a token naming any other key id
is refused before the KMS is called.

* ``use_envelope: false``: the KMS encrypts each message itself (``Encrypt``, 1 byte to
  4 KiB of plaintext: other sizes raise ``ValueError`` before any call); ``aad`` travels
  as the encryption context.
* ``use_envelope: true``: the KMS makes a fresh data key per message
  (``GenerateDataKey``); the message is sealed locally with AES-256-GCM and the wrapped
  data key is stored beside it. There is no size limit and one KMS call per operation.
* Signatures are KMS HMACs (``GenerateMac`` / ``VerifyMac``, HMAC_SHA_256): ``key_id``
  must then be an HMAC key.

Formats (``kms1.`` then URL-safe base64 of a binary frame; lengths are big-endian)::

    direct     0x01 | u16 len | key id | KMS ciphertext blob
    envelope   0x02 | u16 len | key id | u16 len | wrapped data key | nonce[12] | sealed
    signature  0x03 | u16 len | key id | MAC
"""

from __future__ import annotations

import base64
import os
import struct
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import (
    ConfigurationError,
    InvalidOptionsError,
    MissingExtraError,
)
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.crypto.base import (
    Crypto,
    DecryptionError,
    InvalidSignatureError,
    UnknownKeyError,
    as_bytes,
    b64url,
    b64url_decode,
    registered_kms_client,
)

with MissingExtraError.guard("crypto", "kms", "auth", "cryptography"):
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["PREFIX", "KMSCrypto"]

#: Text prefix of every KMS ciphertext and signature.
PREFIX = "kms1."
_DIRECT, _ENVELOPE, _SIGNATURE = 1, 2, 3
_NONCE = 12
#: What KMS ``Encrypt`` accepts (bytes of plaintext); larger or empty messages need envelopes.
DIRECT_MAX_BYTES = 4096
_MAC_ALGORITHM = "HMAC_SHA_256"


@traced("encrypt", "decrypt", "sign", "verify")
class KMSCrypto(Crypto):
    """Encryption and signing through an injected KMS client."""

    adapter_name = "kms"

    def __init__(
        self,
        client: Any,
        *,
        key_id: str,
        key_ids: tuple[str, ...] = (),
        use_envelope: bool = False,
        instance: str = "default",
    ) -> None:
        super().__init__(instance=instance)
        if client is None:
            raise ConfigurationError(_NO_CLIENT.format(instance=instance))
        if not key_id:
            raise InvalidOptionsError(
                "crypto", "key_id", "is required by the kms adapter", instance=instance
            )
        self.client = client
        self.key_id = key_id
        #: Every key id accepted for decrypt and verify: the primary, then retired ones.
        self.accepted_key_ids: tuple[str, ...] = tuple(dict.fromkeys((key_id, *key_ids)))
        self.use_envelope = use_envelope

    @classmethod
    def open(cls, ctx: OpenContext) -> KMSCrypto:
        """Use the client injected for this instance; without one, fail closed."""
        client = registered_kms_client(ctx.instance)
        if client is None:
            raise ConfigurationError(_NO_CLIENT.format(instance=ctx.instance))
        options = ctx.options
        return cls(
            client,
            key_id=options.key_id.strip(),
            key_ids=tuple(k.strip() for k in options.key_ids if k.strip()),
            use_envelope=options.use_envelope,
            instance=ctx.instance,
        )

    # ------------------------------------------------------------------ encryption

    def encrypt(self, plaintext: bytes | str, *, aad: bytes | str = b"") -> str:
        """Encrypt under ``key_id``, directly or with a fresh data key (``use_envelope``)."""
        data, extra = as_bytes(plaintext, "plaintext"), as_bytes(aad, "aad")
        if not self.use_envelope:
            if not 1 <= len(data) <= DIRECT_MAX_BYTES:
                # KMS refuses these with a validation error; say so before the call.
                raise ValueError(
                    f"crypto.{self.instance}: direct KMS encryption takes 1 to "
                    f"{DIRECT_MAX_BYTES} bytes of plaintext; set use_envelope for other sizes"
                )
            blob = self.client.encrypt(KeyId=self.key_id, Plaintext=data, **_context(extra))[
                "CiphertextBlob"
            ]
            return PREFIX + b64url(_frame(_DIRECT, self.key_id) + blob)
        answer = self.client.generate_data_key(KeyId=self.key_id, KeySpec="AES_256")
        wrapped = answer["CiphertextBlob"]
        head = _frame(_ENVELOPE, self.key_id) + struct.pack(">H", len(wrapped)) + wrapped
        nonce = os.urandom(_NONCE)
        sealed = AESGCM(answer["Plaintext"]).encrypt(nonce, data, head + extra)
        return PREFIX + b64url(head + nonce + sealed)

    def decrypt(self, token: str, *, aad: bytes | str = b"") -> bytes:
        """Decrypt a token made under an accepted key id; refuse anything else."""
        extra = as_bytes(aad, "aad")
        kind, key_id, rest, head = self._parse(token, DecryptionError, "ciphertext")
        if kind == _DIRECT:
            try:
                answer = self.client.decrypt(CiphertextBlob=rest, KeyId=key_id, **_context(extra))
            except Exception as exc:
                if _is_kms_refusal(exc):
                    raise DecryptionError("crypto: the KMS refused the ciphertext") from None
                raise
            return answer["Plaintext"]
        if kind != _ENVELOPE or len(rest) < 2:
            raise DecryptionError("crypto: malformed ciphertext")
        (size,) = struct.unpack(">H", rest[:2])
        wrapped, body = rest[2 : 2 + size], rest[2 + size :]
        if len(wrapped) != size or len(body) < _NONCE + 16:
            raise DecryptionError("crypto: malformed ciphertext")
        try:
            data_key = self.client.decrypt(CiphertextBlob=wrapped, KeyId=key_id)["Plaintext"]
        except Exception as exc:
            if _is_kms_refusal(exc):
                raise DecryptionError("crypto: the KMS refused the data key") from None
            raise
        header = head + rest[: 2 + size]
        try:
            return AESGCM(data_key).decrypt(body[:_NONCE], body[_NONCE:], header + extra)
        except InvalidTag:
            raise DecryptionError(
                "crypto: the ciphertext was altered or the associated data differs"
            ) from None

    # ------------------------------------------------------------------ signatures

    def sign(self, message: bytes | str) -> str:
        """Return a KMS HMAC of ``message`` under ``key_id``."""
        mac = self.client.generate_mac(
            KeyId=self.key_id, Message=as_bytes(message, "message"), MacAlgorithm=_MAC_ALGORITHM
        )["Mac"]
        return PREFIX + b64url(_frame(_SIGNATURE, self.key_id) + mac)

    def verify(self, message: bytes | str, signature: str) -> None:
        """Ask the KMS to check the HMAC; raise InvalidSignatureError when it does not match."""
        data = as_bytes(message, "message")
        kind, key_id, mac, _head = self._parse(signature, InvalidSignatureError, "signature")
        if kind != _SIGNATURE or not mac:
            raise InvalidSignatureError("crypto: malformed signature")
        try:
            answer = self.client.verify_mac(
                KeyId=key_id, Message=data, Mac=mac, MacAlgorithm=_MAC_ALGORITHM
            )
        except Exception as exc:
            if _is_kms_refusal(exc):
                raise InvalidSignatureError("crypto: the signature does not match") from None
            raise
        if not answer.get("MacValid"):
            raise InvalidSignatureError("crypto: the signature does not match")

    # ------------------------------------------------------------------ framing

    def _parse(
        self, token: Any, error: type[Exception], what: str
    ) -> tuple[int, str, bytes, bytes]:
        """Return ``(kind, key_id, rest, head)``; refuse unknown key ids before any call."""
        if not isinstance(token, str) or not token.startswith(PREFIX):
            raise error(f"crypto: malformed {what}")
        try:
            raw = b64url_decode(token[len(PREFIX) :])
        except ValueError:
            raise error(f"crypto: malformed {what}") from None
        if len(raw) < 3:
            raise error(f"crypto: malformed {what}")
        kind, size = raw[0], struct.unpack(">H", raw[1:3])[0]
        key_bytes = raw[3 : 3 + size]
        if len(key_bytes) != size:
            raise error(f"crypto: malformed {what}")
        try:
            key_id = key_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raise error(f"crypto: malformed {what}") from None
        if key_id not in self.accepted_key_ids:
            raise UnknownKeyError(f"crypto: the {what} names a key id that is not listed")
        return kind, key_id, raw[3 + size :], raw[: 3 + size]


_NO_CLIENT = (
    "crypto.{instance}: the kms adapter fails closed from configuration alone: it needs a "
    "KMS client injected from code (toolkit_batteries.crypto.register_kms_client); use the "
    "local adapter for file-only setups"
)


def _frame(kind: int, key_id: str) -> bytes:
    encoded = key_id.encode("utf-8")
    return bytes([kind]) + struct.pack(">H", len(encoded)) + encoded


def _context(aad: bytes) -> dict[str, Any]:
    """Return the ``EncryptionContext`` argument carrying ``aad`` (none when empty)."""
    if not aad:
        return {}
    return {"EncryptionContext": {"aad": base64.b64encode(aad).decode("ascii")}}


def _is_kms_refusal(exc: Exception) -> bool:
    """Tell whether ``exc`` is the KMS rejecting the input (not an outage)."""
    response = getattr(exc, "response", None)
    code = response.get("Error", {}).get("Code", "") if isinstance(response, dict) else ""
    return bool({type(exc).__name__, code} & _REFUSALS)


#: KMS error codes (botocore raises exceptions of these names) that mean "bad input".
_REFUSALS = frozenset(
    {"InvalidCiphertextException", "KMSInvalidMacException", "IncorrectKeyException"}
)

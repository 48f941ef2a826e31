"""An in-process stand-in for the KMS *server*, with boto3's KMS client method shapes.

The ``kms`` adapter under test is real; this plays the provider's part (as the local
HTTP servers of other provider adapters do): real AES-GCM and HMAC-SHA256 under named
keys, the response dictionaries boto3 returns, and exceptions named as boto3's modelled
errors. It records every call so tests can prove when the adapter did not call it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


class InvalidCiphertextException(Exception):
    """What boto3 raises when KMS cannot decrypt a blob."""


class KMSInvalidMacException(Exception):
    """What boto3 raises when ``VerifyMac`` finds the MAC wrong."""


class FakeKMS:
    """Named symmetric keys; ciphertext blobs name their key, as real KMS blobs do."""

    def __init__(self, *key_ids: str) -> None:
        self.keys = {key_id: os.urandom(32) for key_id in key_ids}
        self.calls: list[str] = []

    def _seal(self, key_id: str, data: bytes, context: dict | None) -> bytes:
        nonce = os.urandom(12)
        aad = json.dumps(context or {}, sort_keys=True).encode()
        head = key_id.encode() + b"\x00"
        return head + nonce + AESGCM(self.keys[key_id]).encrypt(nonce, data, aad)

    def encrypt(self, *, KeyId: str, Plaintext: bytes, EncryptionContext: dict | None = None):
        self.calls.append("Encrypt")
        return {"KeyId": KeyId, "CiphertextBlob": self._seal(KeyId, Plaintext, EncryptionContext)}

    def generate_data_key(self, *, KeyId: str, KeySpec: str):
        self.calls.append("GenerateDataKey")
        assert KeySpec == "AES_256"
        data_key = os.urandom(32)
        return {
            "KeyId": KeyId,
            "Plaintext": data_key,
            "CiphertextBlob": self._seal(KeyId, data_key, None),
        }

    def decrypt(
        self, *, CiphertextBlob: bytes, KeyId: str | None = None, EncryptionContext=None
    ) -> dict[str, Any]:
        self.calls.append("Decrypt")
        key_id, _, rest = CiphertextBlob.partition(b"\x00")
        name = key_id.decode(errors="replace")
        if name not in self.keys or (KeyId is not None and KeyId != name) or len(rest) < 28:
            raise InvalidCiphertextException()
        aad = json.dumps(EncryptionContext or {}, sort_keys=True).encode()
        try:
            plaintext = AESGCM(self.keys[name]).decrypt(rest[:12], rest[12:], aad)
        except InvalidTag:
            raise InvalidCiphertextException() from None
        return {"KeyId": name, "Plaintext": plaintext}

    def generate_mac(self, *, KeyId: str, Message: bytes, MacAlgorithm: str):
        self.calls.append("GenerateMac")
        assert MacAlgorithm == "HMAC_SHA_256"
        mac = hmac.new(self.keys[KeyId], Message, hashlib.sha256).digest()
        return {"KeyId": KeyId, "Mac": mac, "MacAlgorithm": MacAlgorithm}

    def verify_mac(self, *, KeyId: str, Message: bytes, Mac: bytes, MacAlgorithm: str):
        self.calls.append("VerifyMac")
        expected = hmac.new(self.keys[KeyId], Message, hashlib.sha256).digest()
        if not hmac.compare_digest(expected, Mac):
            raise KMSInvalidMacException()
        return {"KeyId": KeyId, "MacValid": True, "MacAlgorithm": MacAlgorithm}

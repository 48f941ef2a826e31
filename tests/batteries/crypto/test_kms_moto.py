"""The ``kms`` adapter with a real boto3 KMS client on moto's KMS server.

``test_crypto.py`` proves the adapter's framing against an in-process stand-in that counts
calls; here the client is boto3's own, over HTTP to moto's server mode, so the request
shapes, the encryption context, data keys, key rotation and HMAC keys are the KMS API's.
moto does not enforce key states (a disabled or pending-deletion key still decrypts
there), so what the adapter does with KMS's ``DisabledException`` stays unproven.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolkit_batteries.crypto import DecryptionError, InvalidSignatureError

from .conftest import new_kms_key
from .conftest import open_crypto as open_adapter
from .test_crypto import tamper_kms


def new_key(client: Any, spec: str = "SYMMETRIC_DEFAULT") -> str:
    return new_kms_key(client, spec)


def open_crypto(**options: Any) -> Any:
    return open_adapter("kms", **options)


@pytest.mark.parametrize("envelope", [False, True], ids=["direct", "envelope"])
def test_round_trip_with_context_on_a_real_kms_api(kms_client, envelope):
    crypto = open_crypto(key_id=new_key(kms_client), use_envelope=envelope)
    token = crypto.encrypt(b"card ending 4242", aad=b"order-17")
    assert crypto.decrypt(token, aad=b"order-17") == b"card ending 4242"
    with pytest.raises(DecryptionError):  # another encryption context
        crypto.decrypt(token, aad=b"order-18")
    with pytest.raises(DecryptionError):
        crypto.decrypt(tamper_kms(token), aad=b"order-17")


@pytest.mark.parametrize("size", [0, 4097])
def test_direct_encryption_outside_what_kms_takes_says_so(kms_client, size):
    crypto = open_crypto(key_id=new_key(kms_client))
    with pytest.raises(ValueError, match="1 to 4096 bytes of plaintext; set use_envelope"):
        crypto.encrypt(b"x" * size)
    assert len(crypto.decrypt(crypto.encrypt(b"x" * 4096))) == 4096  # the bound itself is fine
    envelope = open_crypto(key_id=crypto.key_id, use_envelope=True)
    assert envelope.decrypt(envelope.encrypt(b"x" * size)) == b"x" * size


def test_a_rotated_key_still_decrypts_what_it_sealed_before(kms_client):
    key = new_key(kms_client)
    crypto = open_crypto(key_id=key)
    before = crypto.encrypt(b"sealed before rotation")
    kms_client.rotate_key_on_demand(KeyId=key)
    after = crypto.encrypt(b"sealed after rotation")
    assert crypto.decrypt(before) == b"sealed before rotation"
    assert crypto.decrypt(after) == b"sealed after rotation"


def test_moving_to_a_new_key_keeps_the_retired_one_for_decryption(kms_client):
    old_key, new = new_key(kms_client), new_key(kms_client)
    sealed_by_old = open_crypto(key_id=old_key).encrypt(b"from 2025")
    rotated = open_crypto(key_id=new, key_ids=[old_key])
    assert rotated.decrypt(sealed_by_old) == b"from 2025"
    assert rotated.decrypt(rotated.encrypt(b"from 2026")) == b"from 2026"


def test_signatures_are_kms_hmacs(kms_client):
    crypto = open_crypto(key_id=new_key(kms_client, "HMAC_256"))
    signature = crypto.sign(b"invoice 42")
    crypto.verify(b"invoice 42", signature)
    with pytest.raises(InvalidSignatureError):
        crypto.verify(b"invoice 43", signature)
    other = open_crypto(key_id=new_key(kms_client, "HMAC_256"), key_ids=[crypto.key_id])
    other.verify(b"invoice 42", signature)  # a retired HMAC key still verifies

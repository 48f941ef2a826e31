"""What every crypto adapter promises, run on each (``conftest.VARIANTS``)."""

from __future__ import annotations

import pytest

from toolkit_batteries.crypto import DecryptionError, InvalidSignatureError, UnknownKeyError

from .conftest import LOCAL_KEY


def flip_near_end(token: str) -> str:
    """Change one base64 character near the end (not the last: it may hold only padding bits)."""
    index = len(token) - 3
    changed = "A" if token[index] != "A" else "B"
    return token[:index] + changed + token[index + 1 :]


class TestCryptoContract:
    @pytest.mark.parametrize("plaintext", [b"card 4242", "päss wörd", b"\x00" * 3000])
    def test_round_trip(self, opened, plaintext):
        token = opened.encrypting.encrypt(plaintext)
        expected = plaintext.encode() if isinstance(plaintext, str) else plaintext
        assert isinstance(token, str) and expected not in token.encode()
        assert opened.encrypting.decrypt(token) == expected

    def test_each_encryption_differs(self, opened):
        first = opened.encrypting.encrypt(b"same")
        assert first != opened.encrypting.encrypt(b"same")

    def test_associated_data_must_match(self, opened):
        token = opened.encrypting.encrypt(b"order total", aad=b"order-1")
        assert opened.encrypting.decrypt(token, aad=b"order-1") == b"order total"
        for wrong in (b"order-2", b""):
            with pytest.raises(DecryptionError):
                opened.encrypting.decrypt(token, aad=wrong)

    def test_a_tampered_or_foreign_token_is_refused(self, opened):
        token = opened.encrypting.encrypt(b"secret")
        with pytest.raises(DecryptionError):
            opened.encrypting.decrypt(flip_near_end(token))
        with pytest.raises(DecryptionError):
            opened.encrypting.decrypt("not a token at all")
        with pytest.raises((DecryptionError, UnknownKeyError)):
            opened.other.decrypt(token)

    def test_signatures_verify_and_refuse_changes(self, opened):
        signature = opened.signing.sign(b"invoice 42")
        opened.signing.verify(b"invoice 42", signature)
        opened.signing.verify("invoice 42", signature)  # str is its UTF-8 bytes
        with pytest.raises(InvalidSignatureError):
            opened.signing.verify(b"invoice 43", signature)
        with pytest.raises((InvalidSignatureError, UnknownKeyError)):
            opened.signing.verify(b"invoice 42", flip_near_end(signature))

    def test_no_key_material_in_repr(self, opened):
        text = repr(opened.encrypting) + repr(opened.signing)
        assert LOCAL_KEY.split(":")[1] not in text and "kms-test-secret" not in text

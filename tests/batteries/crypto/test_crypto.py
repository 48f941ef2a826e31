"""The crypto battery: local AES-256-GCM/HMAC with rotation, the dev-key rule, kms."""

from __future__ import annotations

import base64
import os

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.processes import python_prints
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError
from toolkit_batteries.crypto import (
    Crypto,
    DecryptionError,
    InvalidSignatureError,
    UnknownKeyError,
    register_kms_client,
    unregister_kms_client,
)
from toolkit_batteries.crypto.adapters.kms import KMSCrypto
from toolkit_batteries.crypto.adapters.local import LocalCrypto
from toolkit_batteries.crypto.base import b64url, b64url_decode
from toolkit_batteries.crypto.options import DEVELOPMENT_KEY

from .fake_kms import FakeKMS


def new_key(size: int = 32) -> str:
    return base64.b64encode(os.urandom(size)).decode()


KEY_A, KEY_B = new_key(), new_key()


def open_crypto(options: dict | None = None, adapter: str = "local") -> Crypto:
    settings = {"crypto": {"adapter": adapter, "options": options or {}}}
    return Container(Config.load(settings, {})).crypto()


@pytest.fixture
def crypto() -> LocalCrypto:
    return open_crypto({"key": f"a:{KEY_A}"})


def tamper(token: str, index: int = -1) -> str:
    """Flip one bit of the base64url body of a ``v1.<kid>.<body>`` token."""
    head, _, body = token.rpartition(".")
    raw = bytearray(b64url_decode(body))
    raw[index] ^= 0x01
    return f"{head}.{b64url(bytes(raw))}"


# ------------------------------------------------------------------ local: encryption


class TestLocalEncryption:
    def test_round_trip(self, crypto):
        for plaintext in (b"", b"card 4111", os.urandom(100_000)):
            token = crypto.encrypt(plaintext)
            assert isinstance(token, str) and token.isascii()
            assert token.startswith("v1.a.")
            assert crypto.decrypt(token) == plaintext
        assert crypto.decrypt(crypto.encrypt("zoë")) == "zoë".encode()

    def test_each_encryption_uses_a_fresh_nonce(self, crypto):
        tokens = {crypto.encrypt(b"same") for _ in range(50)}
        assert len(tokens) == 50

    def test_ciphertext_hides_the_plaintext(self, crypto):
        token = crypto.encrypt(b"very recognisable plaintext")
        assert b"recognisable" not in b64url_decode(token.rsplit(".", 1)[1])

    @pytest.mark.parametrize("index", [0, 5, 12, 20, -1])
    def test_tampering_with_any_byte_fails(self, crypto, index):
        token = crypto.encrypt(b"some secret data")
        with pytest.raises(DecryptionError, match="altered"):
            crypto.decrypt(tamper(token, index))

    def test_associated_data_is_bound(self, crypto):
        token = crypto.encrypt(b"ssn", aad=b"user:7")
        assert crypto.decrypt(token, aad="user:7") == b"ssn"
        with pytest.raises(DecryptionError):
            crypto.decrypt(token, aad=b"user:8")
        with pytest.raises(DecryptionError):
            crypto.decrypt(token)

    @pytest.mark.parametrize(
        "token",
        ["", "v1", "v1.a", "v1..abc", "v2.a.AAAA", "v1.a.AAAA", "v1.a.!!!", "v1.a.b.c", 42, None],
    )
    def test_malformed_tokens_fail_closed(self, crypto, token):
        with pytest.raises(DecryptionError):
            crypto.decrypt(token)

    def test_the_key_id_header_is_authenticated(self):
        both = open_crypto({"key": f"a:{KEY_A},b:{KEY_A}"})  # same key, two ids
        token = both.encrypt(b"x")
        moved = "v1.b." + token.split(".", 2)[2]
        with pytest.raises(DecryptionError):
            both.decrypt(moved)

    def test_unknown_key_id_fails(self, crypto):
        other = open_crypto({"key": f"z:{KEY_B}"})
        with pytest.raises(UnknownKeyError):
            crypto.decrypt(other.encrypt(b"x"))
        assert issubclass(UnknownKeyError, DecryptionError)

    def test_plaintext_and_aad_types(self, crypto):
        with pytest.raises(TypeError):
            crypto.encrypt(123)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            crypto.encrypt(b"x", aad=None)  # type: ignore[arg-type]


# ------------------------------------------------------------------ local: signatures


class TestLocalSignatures:
    def test_sign_and_verify(self, crypto):
        signature = crypto.sign(b"invoice 42")
        assert signature.startswith("v1.a.")
        assert crypto.verify(b"invoice 42", signature) is None
        assert crypto.verify("invoice 42", signature) is None
        assert crypto.sign(b"invoice 42") == signature  # HMAC is deterministic

    def test_tampered_message_or_signature_fails(self, crypto):
        signature = crypto.sign(b"invoice 42")
        with pytest.raises(InvalidSignatureError):
            crypto.verify(b"invoice 43", signature)
        with pytest.raises(InvalidSignatureError):
            crypto.verify(b"invoice 42", tamper(signature))
        for bad in ("", "v1.a.", "v1.a.!!", "v9.a.AAAA", "nodots"):
            with pytest.raises(InvalidSignatureError):
                crypto.verify(b"invoice 42", bad)

    def test_explicit_sign_key(self):
        sign_key = new_key(64)
        crypto = open_crypto({"key": KEY_A, "sign_key": f"s1:{sign_key}"})
        signature = crypto.sign(b"m")
        assert signature.startswith("v1.s1.")
        derived = open_crypto({"key": KEY_A})
        with pytest.raises(UnknownKeyError):
            derived.verify(b"m", signature)

    def test_signing_key_is_not_the_encryption_key(self, crypto):
        """The derived signing key differs from the AES key (HKDF, not reuse)."""
        import hashlib
        import hmac

        raw_key = base64.b64decode(KEY_A)
        naive = hmac.new(raw_key, b"v1.a.m", hashlib.sha256).digest()
        assert crypto.sign(b"m") != "v1.a." + b64url(naive)


# ------------------------------------------------------------------ rotation


class TestRotation:
    def test_retired_keys_still_decrypt_and_verify(self):
        old = open_crypto({"key": f"2024:{KEY_A}"})
        token, signature = old.encrypt(b"old data"), old.sign(b"old message")

        rotated = open_crypto({"key": f"2025:{KEY_B},2024:{KEY_A}"})
        assert rotated.active_kid == "2025"
        assert rotated.key_ids == ("2025", "2024")
        assert rotated.decrypt(token) == b"old data"
        rotated.verify(b"old message", signature)
        fresh = rotated.encrypt(b"new data")
        assert fresh.startswith("v1.2025.")
        assert rotated.sign(b"x").startswith("v1.2025.")

        # The old deployment cannot read what the new key wrote...
        with pytest.raises(UnknownKeyError):
            old.decrypt(fresh)
        # ...and once the retired key is removed, its data fails closed.
        retired = open_crypto({"key": f"2025:{KEY_B}"})
        with pytest.raises(UnknownKeyError):
            retired.decrypt(token)
        with pytest.raises(UnknownKeyError):
            retired.verify(b"old message", signature)
        assert retired.decrypt(fresh) == b"new data"

    def test_bare_keys_get_a_stable_derived_key_id(self):
        first = open_crypto({"key": KEY_A})
        again = open_crypto({"key": KEY_A.rstrip("=").replace("+", "-").replace("/", "_")})
        assert first.active_kid == again.active_kid
        assert first.active_kid.startswith("k") and len(first.active_kid) == 13
        assert again.decrypt(first.encrypt(b"x")) == b"x"
        rotated = open_crypto({"key": f"{KEY_B}, {KEY_A}"})
        assert rotated.decrypt(first.encrypt(b"y")) == b"y"
        assert rotated.active_kid != first.active_kid

    def test_sign_key_rotation(self):
        s_old, s_new = new_key(64), new_key(64)
        old = open_crypto({"key": KEY_A, "sign_key": f"o:{s_old}"})
        signature = old.sign(b"m")
        rotated = open_crypto({"key": KEY_A, "sign_key": f"n:{s_new},o:{s_old}"})
        rotated.verify(b"m", signature)
        assert rotated.sign(b"m").startswith("v1.n.")
        assert rotated.sign_key_ids == ("n", "o")


# ------------------------------------------------------------------ options


@pytest.mark.parametrize(
    ("options", "field", "reason"),
    [
        ({"key": "not base64 at all!"}, "key", "is not base64"),
        ({"key": base64.b64encode(b"short").decode()}, "key", "base64 of 32 bytes"),
        ({"key": f"a:{KEY_A},a:{KEY_B}"}, "key", "twice"),
        ({"key": f"bad kid:{KEY_A}"}, "key", "key id"),
        ({"key": f"{KEY_A},,{KEY_B}"}, "key", "empty entry"),
        ({"key": KEY_A, "sign_key": KEY_A}, "sign_key", "base64 of 64 bytes"),
    ],
)
def test_invalid_keys_fail_naming_the_field_never_the_value(options, field, reason):
    with pytest.raises(InvalidOptionsError) as info:
        open_crypto(options)
    message = str(info.value)
    assert f'crypto.default: option "{field}"' in message and reason in message
    for value in options.values():
        for part in value.replace(":", ",").split(","):
            if len(part) > 8:
                assert part.strip() not in message


def test_keys_never_appear_in_repr_or_options_display():
    crypto = open_crypto({"key": f"a:{KEY_A}"})
    assert KEY_A not in repr(crypto)
    config = Config.load({"crypto": {"options": {"key": KEY_A, "sign_key": new_key(64)}}}, {})
    shown = str(config.redacted_services()) + repr(config.service("crypto").options)
    assert KEY_A not in shown


# ------------------------------------------------------------------ development key


class TestDevelopmentKey:
    def test_refused_outside_development(self, monkeypatch):
        monkeypatch.delenv("TOOLKIT_ENV", raising=False)
        with pytest.raises(InvalidOptionsError) as info:
            open_crypto()
        assert 'crypto.default: option "key" is the public development key' in str(info.value)
        assert DEVELOPMENT_KEY not in str(info.value)
        monkeypatch.setenv("TOOLKIT_ENV", "production")
        with pytest.raises(InvalidOptionsError):
            open_crypto()

    @pytest.mark.parametrize("env", ["dev", "test", "development", " Development "])
    def test_accepted_in_development_environments(self, monkeypatch, env, caplog):
        monkeypatch.setenv("TOOLKIT_ENV", env)
        crypto = open_crypto()
        assert crypto.decrypt(crypto.encrypt(b"x")) == b"x"
        assert "public development key" in caplog.text

    def test_allow_dev_key_permits_it_anywhere(self, monkeypatch):
        monkeypatch.setenv("TOOLKIT_ENV", "production")
        crypto = open_crypto({"allow_dev_key": True})
        assert crypto.decrypt(crypto.encrypt(b"x")) == b"x"

    def test_refused_even_as_a_retired_key(self, monkeypatch):
        monkeypatch.delenv("TOOLKIT_ENV", raising=False)
        with pytest.raises(InvalidOptionsError):
            open_crypto({"key": f"new:{KEY_A},dev:{DEVELOPMENT_KEY}"})

    def test_the_development_key_is_deterministic(self, monkeypatch):
        monkeypatch.setenv("TOOLKIT_ENV", "dev")
        token = open_crypto().encrypt(b"x")
        assert open_crypto().decrypt(token) == b"x"  # any process, same key

    def test_a_real_key_needs_no_environment(self, monkeypatch):
        monkeypatch.delenv("TOOLKIT_ENV", raising=False)
        assert open_crypto({"key": KEY_A}).decrypt(open_crypto({"key": KEY_A}).encrypt(b"x"))


# ------------------------------------------------------------------ kms


class TestKMS:
    @pytest.fixture
    def kms(self):
        fake = FakeKMS("key-2025", "key-2024", "hmac-2025")
        register_kms_client(fake, instance="default")
        yield fake
        unregister_kms_client("default")

    def test_fails_closed_from_configuration_alone(self):
        unregister_kms_client("default")
        options = {"key_id": "arn:aws:kms:eu-west-1:1:key/abc", "region": "eu-west-1"}
        with pytest.raises(ConfigurationError) as info:
            open_crypto(options, adapter="kms")
        message = str(info.value)
        assert "crypto.default: the kms adapter fails closed" in message
        assert "injected from code" in message
        assert "arn:aws" not in message

    def test_needs_a_key_id(self, kms):
        with pytest.raises(InvalidOptionsError, match='option "key_id" is required'):
            open_crypto({}, adapter="kms")

    @pytest.mark.parametrize("envelope", [False, True])
    def test_round_trip_and_tamper(self, kms, envelope):
        crypto = open_crypto({"key_id": "key-2025", "use_envelope": envelope}, adapter="kms")
        assert isinstance(crypto, KMSCrypto)
        token = crypto.encrypt(b"card 4111", aad=b"user:7")
        assert token.startswith("kms1.")
        assert crypto.decrypt(token, aad=b"user:7") == b"card 4111"
        assert kms.calls[0] == ("GenerateDataKey" if envelope else "Encrypt")
        with pytest.raises(DecryptionError):
            crypto.decrypt(token, aad=b"user:8")
        with pytest.raises(DecryptionError):
            crypto.decrypt(tamper_kms(token))

    def test_envelope_handles_large_messages_with_one_call_each(self, kms):
        crypto = open_crypto({"key_id": "key-2025", "use_envelope": True}, adapter="kms")
        big = os.urandom(200_000)
        token = crypto.encrypt(big)
        assert crypto.decrypt(token) == big
        assert kms.calls == ["GenerateDataKey", "Decrypt"]

    def test_rotation_with_key_ids_and_unknown_ids_never_reach_the_kms(self, kms):
        old = open_crypto({"key_id": "key-2024"}, adapter="kms")
        token = old.encrypt(b"old")
        rotated = open_crypto({"key_id": "key-2025", "key_ids": ["key-2024"]}, adapter="kms")
        assert rotated.decrypt(token) == b"old"
        assert rotated.encrypt(b"new") != token
        retired = open_crypto({"key_id": "key-2025"}, adapter="kms")
        kms.calls.clear()
        with pytest.raises(UnknownKeyError):
            retired.decrypt(token)
        assert kms.calls == []

    def test_signatures_are_kms_macs(self, kms):
        crypto = open_crypto({"key_id": "hmac-2025"}, adapter="kms")
        signature = crypto.sign(b"invoice")
        crypto.verify(b"invoice", signature)
        with pytest.raises(InvalidSignatureError):
            crypto.verify(b"invoice!", signature)
        with pytest.raises(InvalidSignatureError):
            crypto.verify(b"invoice", "kms1.AAAA")
        other = open_crypto({"key_id": "key-2025"}, adapter="kms")
        with pytest.raises(UnknownKeyError):
            other.verify(b"invoice", signature)

    def test_client_is_per_instance(self, kms):
        settings = {
            "crypto": {
                "default": {"adapter": "kms", "options": {"key_id": "key-2025"}},
                "billing": {"adapter": "kms", "options": {"key_id": "key-2025"}},
            }
        }
        container = Container(Config.load(settings, {}))
        assert container.crypto().client is kms
        with pytest.raises(ConfigurationError, match=r"crypto\.billing: the kms adapter"):
            container.crypto("billing")


def tamper_kms(token: str) -> str:
    raw = bytearray(b64url_decode(token.removeprefix("kms1.")))
    raw[-1] ^= 0x01
    return "kms1." + b64url(bytes(raw))


# ------------------------------------------------------------------ checks and imports


def _check_ids(toolkit: dict, *, deploy: bool = False) -> list[str]:
    with override_settings(TOOLKIT=toolkit):
        found = checks.run_checks(tags=["toolkit"], include_deployment_checks=deploy)
    return [m.id for m in found if m.id.startswith("toolkit_crypto.")]


def test_checks(monkeypatch):
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    assert _check_ids({}) == []  # the dev key is a deploy-time finding only
    assert _check_ids({}, deploy=True) == ["toolkit_crypto.E003"]
    assert _check_ids({"crypto": {"options": {"key": KEY_A}}}, deploy=True) == []
    assert _check_ids({"crypto": {"options": {"key": "nope"}}}) == ["toolkit_crypto.E002"]
    assert _check_ids({"crypto": {"options": {"allow_dev_key": True}}}, deploy=True) == []
    monkeypatch.setenv("TOOLKIT_ENV", "test")
    assert _check_ids({}, deploy=True) == []


def test_importing_the_battery_imports_no_cryptography():
    code = (
        "import sys, toolkit_batteries.crypto, toolkit_batteries.crypto.checks\n"
        "print('cryptography' in sys.modules)"
    )
    assert python_prints(code) == "False"

"""What every password adapter promises, run on each (``conftest.VARIANTS``)."""

from __future__ import annotations

import pytest

from .conftest import open_hasher


class TestPasswordContract:
    @pytest.mark.parametrize("password", ["correct horse", "päss wörd ✓", "x" * 1000, ""])
    def test_hash_then_verify(self, hasher, password):
        encoded = hasher.hash(password)
        assert password == "" or password not in encoded
        assert hasher.verify(password, encoded)
        assert not hasher.verify(password + "!", encoded)

    def test_every_hash_has_its_own_salt(self, hasher):
        assert hasher.hash("same") != hasher.hash("same")

    @pytest.mark.parametrize("encoded", ["", "plain", "$argon2id$v=19$m=1$garbage", "🙂" * 20])
    def test_a_malformed_hash_is_a_mismatch_not_an_error(self, hasher, encoded):
        assert hasher.verify("anything", encoded) is False

    def test_a_parameter_change_asks_for_a_rehash(self, hasher):
        encoded = hasher.hash("pw")
        assert not hasher.needs_rehash(encoded)
        stronger = open_hasher(hasher.adapter_name, time=2)
        assert stronger.needs_rehash(encoded)
        assert stronger.verify("pw", encoded)  # old hashes still verify meanwhile

    def test_an_unknown_account_costs_a_verification_and_fails(self, hasher):
        assert hasher.verify_dummy("whatever") is False

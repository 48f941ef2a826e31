"""One contract for every secrets adapter: env and secretstore (a local KV v2 server)."""

from __future__ import annotations

import pytest

from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.secrets import (
    InvalidSecretNameError,
    SecretNotFoundError,
    Secrets,
    SecretsNotSupportedError,
)

VALUE = "s3cr3t-Vq8-value"


class TestSecretsContract:
    """The same calls, the same answers, on every adapter."""

    def test_identity(self, opened):
        assert isinstance(opened.secrets, Secrets)
        assert opened.secrets.adapter_name == opened.variant
        assert opened.secrets.service_name == "secrets"
        assert opened.container.secrets() is opened.secrets
        assert opened.secrets.prefix == opened.prefix

    def test_get_reads_the_prefixed_secret(self, opened):
        opened.put("DB_PASSWORD", VALUE)
        assert opened.secrets.get("DB_PASSWORD") == VALUE
        assert opened.secrets.exists("DB_PASSWORD")
        assert opened.secrets.get_or("DB_PASSWORD", None) == VALUE

    def test_the_prefix_scopes_names(self, opened):
        if opened.server is None:
            opened.monkeypatch.setenv("OTHER_DB_PASSWORD", VALUE)
            opened.monkeypatch.setenv("DB_PASSWORD", VALUE)
        else:
            opened.server.put("OTHER/DB_PASSWORD", {"value": VALUE})
            opened.server.put("DB_PASSWORD", {"value": VALUE})
        assert not opened.secrets.exists("DB_PASSWORD")

    def test_missing_names_the_key_not_a_value(self, opened):
        opened.put("PRESENT", VALUE)
        with pytest.raises(SecretNotFoundError) as caught:
            opened.secrets.get("API_KEY")
        error = caught.value
        assert isinstance(error, KeyError) and error.code == "not_found"
        assert str(error).startswith('secrets.default: no secret "API_KEY"')
        assert VALUE not in str(error) and VALUE not in repr(error)
        assert opened.secrets.get_or("API_KEY", "fallback") == "fallback"
        assert opened.secrets.exists("API_KEY") is False

    def test_an_empty_value_counts_as_missing(self, opened):
        opened.put("EMPTY", "")
        with pytest.raises(SecretNotFoundError):
            opened.secrets.get("EMPTY")

    def test_a_changed_value_is_seen_at_once(self, opened):
        opened.put("ROTATED", "first-value")
        assert opened.secrets.get("ROTATED") == "first-value"
        opened.put("ROTATED", "second-value")
        assert opened.secrets.get("ROTATED") == "second-value"

    @pytest.mark.parametrize("bad", ["", "../etc", "a//b", ".hidden", "a b", "x#", 7, None])
    def test_invalid_names_are_refused_without_echo(self, opened, bad):
        with pytest.raises(InvalidSecretNameError) as caught:
            opened.secrets.get(bad)
        assert caught.value.code == "invalid_argument"
        if isinstance(bad, str) and bad:
            assert bad not in str(caught.value)

    def test_writes_are_supported_or_refused_clearly(self, opened):
        if opened.variant == "env":
            with pytest.raises(SecretsNotSupportedError, match='"env" does not support set'):
                opened.secrets.set("NEW", VALUE)
            with pytest.raises(SecretsNotSupportedError, match="delete"):
                opened.secrets.delete("NEW")
            return
        opened.secrets.set("NEW", VALUE)
        assert opened.secrets.get("NEW") == VALUE
        assert opened.server.stored(f"{opened.prefix}/NEW") == {"value": VALUE}
        assert opened.secrets.delete("NEW") is True
        assert opened.secrets.delete("NEW") is False
        assert not opened.secrets.exists("NEW")

    def test_set_refuses_a_field_and_an_empty_value(self, opened):
        with pytest.raises(InvalidSecretNameError):
            opened.secrets.set("NEW#field", VALUE)
        with pytest.raises(InvalidSecretNameError):
            opened.secrets.set("NEW", "")

    def test_repr_shows_no_value_and_no_token(self, opened):
        opened.put("SHOWN", VALUE)
        opened.secrets.get("SHOWN")
        text = repr(opened.secrets)
        assert opened.variant in text and opened.prefix in text
        assert VALUE not in text and "hvs." not in text

    def test_ping(self, opened):
        opened.secrets.ping()

    def test_a_closed_networked_adapter_refuses(self, opened):
        opened.put("AFTER", VALUE)
        opened.container.close()
        if opened.variant == "env":  # holds nothing: the environment is still there
            assert opened.secrets.get("AFTER") == VALUE
            return
        with pytest.raises(ServiceUnavailableError, match="closed"):
            opened.secrets.get("AFTER")

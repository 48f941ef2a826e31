"""The mailer in Django: derived EMAIL_* settings, get_connection, services.mailer(),
strict options, the log adapter's redaction, and the system checks."""

from __future__ import annotations

import logging

import pytest
from django.core.mail import get_connection
from django.test import override_settings

from toolkit_batteries import services
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    UnknownAdapterError,
    UnknownFieldError,
)
from toolkit_batteries.mailer import Mailer, django_email_settings
from toolkit_batteries.mailer.adapters.log import LogMailer
from toolkit_batteries.mailer.adapters.memory import MemoryMailer
from toolkit_batteries.mailer.adapters.smtp import SMTPMailer


def test_defaults_derive_the_log_backend_and_spec_defaults() -> None:
    derived = django_email_settings({})
    assert derived == {
        "EMAIL_BACKEND": "toolkit_batteries.mailer.adapters.log.LogMailer",
        "EMAIL_HOST": "localhost",
        "EMAIL_PORT": 25,
        "EMAIL_HOST_USER": "",
        "EMAIL_HOST_PASSWORD": "",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": 30.0,
        "EMAIL_MAX_MESSAGE_SIZE": 10 * 1024 * 1024,
        "EMAIL_LOG_BODY": "redacted",
    }


@pytest.mark.parametrize(
    ("encryption", "tls", "ssl"),
    [("starttls", True, False), ("tls", False, True), ("none", False, False)],
)
def test_encryption_maps_onto_djangos_switches(encryption: str, tls: bool, ssl: bool) -> None:
    block = {"adapter": "smtp", "options": {"host": "mx.example.com", "encryption": encryption}}
    derived = django_email_settings({"mailer": block})
    assert (derived["EMAIL_USE_TLS"], derived["EMAIL_USE_SSL"]) == (tls, ssl)
    with override_settings(**derived):
        backend = get_connection()
        assert type(backend) is SMTPMailer
        assert backend.options.encryption == encryption
        assert (backend.use_tls, backend.use_ssl) == (tls, ssl)


def test_aliases_and_environment_choose_the_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    assert django_email_settings({"mailer": {"adapter": "locmem"}})["EMAIL_BACKEND"].endswith(
        "MemoryMailer"
    )
    monkeypatch.setenv("MAILER__DEFAULT__ADAPTER", "smtp")
    monkeypatch.setenv("MAILER__DEFAULT__PORT", "2525")
    derived = django_email_settings({})
    assert derived["EMAIL_BACKEND"].endswith("SMTPMailer") and derived["EMAIL_PORT"] == 2525


def test_a_django_backend_dotted_path_passes_through_unchanged() -> None:
    path = "django.core.mail.backends.locmem.EmailBackend"
    assert django_email_settings({"mailer": {"adapter": path}})["EMAIL_BACKEND"] == path
    with pytest.raises(UnknownAdapterError, match="not a Django e-mail backend"):
        django_email_settings(
            {"mailer": {"adapter": "toolkit_batteries.mailer.options.MailerOptions"}}
        )
    with pytest.raises(UnknownAdapterError, match="did you mean"):
        django_email_settings({"mailer": {"adapter": "smpt"}})


def test_get_connection_keywords_are_decoded_strictly() -> None:
    path = "toolkit_batteries.mailer.adapters.smtp.SMTPMailer"
    backend = get_connection(path, host="mx.example.com", port=587, max_message_size="1MiB")
    assert (backend.host, backend.port, backend.max_message_size) == (
        "mx.example.com",
        587,
        1 << 20,
    )
    with pytest.raises(UnknownFieldError, match="did you mean"):
        get_connection(path, hots="mx.example.com")
    with pytest.raises(InvalidOptionsError) as caught:
        get_connection(path, port=70000, password="s3cret-value")
    assert "port" in str(caught.value) and "70000" not in str(caught.value)
    with pytest.raises(InvalidOptionsError, match="encryption"):
        get_connection(path, use_tls=True, use_ssl=True)


def test_services_mailer_is_built_through_get_connection_from_toolkit() -> None:
    with override_settings(TOOLKIT={"mailer": {"adapter": "memory"}}):
        mailer = services.mailer()
        assert type(mailer) is MemoryMailer and isinstance(mailer, Mailer)
        assert services.mailer() is not mailer  # one backend per use, as get_connection
    with override_settings(
        TOOLKIT={"mailer": {"marketing": {"adapter": "smtp", "options": {"port": 2525}}}}
    ):
        assert type(services.mailer()) is LogMailer
        other = services.mailer("marketing")
        assert type(other) is SMTPMailer and other.port == 2525 and other.instance == "marketing"


def _log(mode: str, caplog: pytest.LogCaptureFixture, **kwargs) -> logging.LogRecord:
    caplog.clear()
    container = Container(Config.load({"mailer": {"options": {"log_body": mode}}}, {}))
    with caplog.at_level(logging.INFO, logger="toolkit.mailer"):
        container.mailer().send(
            "ann@example.com",
            "Verify",
            "Open https://app.example.com/verify?t=abc\nproxy http://bob:hunter22@proxy.example.com/\n"
            "Authorization: Bearer tok3nvalue",
            headers={"X-Api-Key": "k3y-value", "X-Campaign": "spring"},
            **kwargs,
        )
    [record] = [r for r in caplog.records if r.name == "toolkit.mailer"]
    return record


def test_the_log_adapter_redacts_bodies_and_secret_headers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    record = _log("redacted", caplog)
    text = record.getMessage() + repr(record.__dict__)
    assert "https://app.example.com/verify?t=abc" in record.getMessage()
    for secret in ("hunter22", "tok3nvalue", "k3y-value"):
        assert secret not in text
    assert record.headers == {"X-Api-Key": "[redacted]", "X-Campaign": "spring"}
    assert record.mail_to == ["ann@example.com"] and record.subject == "Verify"

    full = _log("full", caplog)
    assert "hunter22" in full.getMessage() and "k3y-value" not in repr(full.__dict__)

    none = _log("none", caplog)
    assert "verify?t=abc" not in none.getMessage() and not hasattr(none, "body")
    assert none.size > 0


def test_checks_report_credentials_and_encryption() -> None:
    from toolkit_batteries.core.checks import service_checks

    config = Config.load(
        {
            "mailer": {
                "a": {"adapter": "smtp", "options": {"username": "u"}},
                "b": {
                    "adapter": "smtp",
                    "options": {"username": "u", "password": "pw-x1", "encryption": "none"},
                },
                "c": {"adapter": "log", "options": {"timeout": "-1s"}},
                "ok": {"adapter": "smtp", "options": {"username": "u", "password": "pw-x1"}},
            }
        },
        {},
    )
    found = service_checks("mailer", config)
    assert sorted((m.id, m.msg.split(":")[0]) for m in found) == [
        ("toolkit_mailer.E002", "mailer.a"),
        ("toolkit_mailer.E003", "mailer.c"),
        ("toolkit_mailer.W001", "mailer.b"),
    ]
    assert all("pw-x1" not in m.msg for m in found)

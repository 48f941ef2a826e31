"""What only the smtp adapter has: STARTTLS and AUTH on the wire, refusals, the size limit
before connecting, and no password in any error or log."""

from __future__ import annotations

import logging
import smtplib
import traceback

import pytest
from django.core.mail import EmailMessage

from tests.ports import free_port
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.mailer import MailDeliveryError, MessageTooLargeError

from .conftest import USERNAME, smtp_options
from .smtpserver import SMTPServer


def _mailer(options: dict) -> tuple[Container, object]:
    container = Container(Config.load({"mailer": {"adapter": "smtp", "options": options}}, {}))
    return container, container.mailer()


def test_messages_travel_over_starttls_after_auth(smtp: SMTPServer, smtp_password: str) -> None:
    container, mailer = _mailer(smtp_options(smtp, smtp_password))
    try:
        mailer.send("ann@example.com", "tls", "body", from_email="me@example.com")
        [got] = smtp.wait_for(1)
    finally:
        container.close()
    assert got.tls is True
    assert got.login == USERNAME
    assert got.rcpt_tos == ["ann@example.com"]
    assert got.message["Message-ID"]


def test_the_server_refuses_a_wrong_password_and_the_error_hides_it(
    smtp: SMTPServer, smtp_password: str, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = smtp_password + "-wrong"
    caplog.set_level(logging.DEBUG)
    container, mailer = _mailer(smtp_options(smtp, wrong))
    try:
        with pytest.raises(MailDeliveryError) as caught:
            mailer.send("ann@example.com", "s", "b")
    finally:
        container.close()
    assert isinstance(caught.value, smtplib.SMTPException)
    assert "SMTPAuthenticationError" in str(caught.value) and "535" in str(caught.value)
    text = "".join(traceback.format_exception(caught.value)) + repr(caught.value)
    text += repr(mailer) + repr(mailer.options) + caplog.text
    assert wrong not in text and smtp_password not in text
    assert smtp.received == []


def test_without_starttls_the_server_refuses_auth(smtp: SMTPServer, smtp_password: str) -> None:
    container, mailer = _mailer(smtp_options(smtp, smtp_password, encryption="none"))
    try:
        with pytest.raises(MailDeliveryError):
            mailer.send("ann@example.com", "s", "b")
    finally:
        container.close()
    assert smtp.received == []


def test_an_untrusted_certificate_is_refused(
    smtp: SMTPServer, smtp_password: str, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from .smtpserver import make_certificate

    other, _ = make_certificate(tmp_path)  # a different CA: the server's cert is not trusted
    monkeypatch.setenv("SSL_CERT_FILE", str(other))
    container, mailer = _mailer(smtp_options(smtp, smtp_password))
    try:
        with pytest.raises(MailDeliveryError, match="SSL"):
            mailer.send("ann@example.com", "s", "b")
    finally:
        container.close()
    assert smtp.received == []


def test_the_default_10_mib_limit_is_enforced_before_connecting(
    smtp: SMTPServer, smtp_password: str
) -> None:
    container, mailer = _mailer(smtp_options(smtp, smtp_password))
    assert mailer.max_message_size == 10 * 1024 * 1024
    before = smtp.connections
    try:
        with pytest.raises(MessageTooLargeError):
            mailer.send("ann@example.com", "big", "x" * (10 * 1024 * 1024 + 1))
        assert smtp.connections == before
        assert smtp.received == []
        # just under the limit passes, over the real server
        mailer.send("ann@example.com", "fits", "y" * (64 * 1024))
        assert len(smtp.wait_for(1)) == 1
        assert smtp.connections == before + 1
    finally:
        container.close()


def test_an_unreachable_server_fails_the_send_and_the_ping(smtp_password: str) -> None:
    options = {
        "host": "127.0.0.1",
        "port": free_port(),
        "username": USERNAME,
        "password": smtp_password,
        "timeout": "2s",
    }
    container, mailer = _mailer(options)
    try:
        with pytest.raises(MailDeliveryError, match="ConnectionRefusedError"):
            mailer.send("ann@example.com", "s", "b")
        with pytest.raises(ServiceUnavailableError) as caught:
            mailer.ping()
        assert smtp_password not in str(caught.value)
        quiet = type(mailer)(fail_silently=True, options=mailer.options)
        assert quiet.send_messages([EmailMessage("s", "b", to=["a@example.com"])]) == 0
    finally:
        container.close()


def test_ping_succeeds_against_the_server(smtp: SMTPServer, smtp_password: str) -> None:
    container, mailer = _mailer(smtp_options(smtp, smtp_password))
    try:
        before = smtp.connections
        mailer.ping()
        assert smtp.connections == before + 1
    finally:
        container.close()


def test_django_settings_and_keywords_build_the_same_backend(
    smtp: SMTPServer, smtp_password: str
) -> None:
    from django.core.mail import get_connection, send_mail
    from django.test import override_settings

    from toolkit_batteries.mailer import django_email_settings

    block = {"adapter": "smtp", "options": smtp_options(smtp, smtp_password)}
    with override_settings(**django_email_settings({"mailer": block})):
        backend = get_connection()
        assert (backend.host, backend.port, backend.use_tls, backend.use_ssl) == (
            "127.0.0.1",
            smtp.port,
            True,
            False,
        )
        assert backend.timeout == 5.0
        # send_mail's auth_user/auth_password reach the backend as username/password
        with pytest.raises(smtplib.SMTPException):
            send_mail(
                "s",
                "b",
                "a@example.com",
                ["b@example.com"],
                auth_user=USERNAME,
                auth_password="not-it",
            )
        assert send_mail("s", "b", "a@example.com", ["b@example.com"]) == 1
    assert len(smtp.wait_for(1)) == 1

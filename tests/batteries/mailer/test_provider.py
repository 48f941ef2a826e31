"""The provider adapter: django-anymail's Postmark backend, unchanged, against a local
server speaking Postmark's wire format."""

from __future__ import annotations

import logging
import traceback

import pytest
from django.core.mail import EmailMessage, get_connection, send_mail
from django.test import override_settings

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.mailer import django_email_settings

from .conftest import POSTMARK
from .postmark import PostmarkServer


def _block(**extra: object) -> dict:
    return {"adapter": "provider", "options": {"backend_path": POSTMARK, **extra}}


def test_send_reaches_the_provider_api_with_the_token(postmark: PostmarkServer) -> None:
    container = Container(Config.load({"mailer": _block()}, {}))
    try:
        container.mailer().send(
            "ann@example.com", "Hi", "text", html="<p>x</p>", from_email="me@example.com"
        )
    finally:
        container.close()
    [payload] = postmark.received
    assert payload["To"] == "ann@example.com" and payload["From"] == "me@example.com"
    assert (payload["TextBody"], payload["HtmlBody"]) == ("text", "<p>x</p>")


def test_djangos_helpers_call_anymail_unchanged(postmark: PostmarkServer) -> None:
    derived = django_email_settings({"mailer": _block()})
    assert derived["EMAIL_BACKEND"] == POSTMARK
    with override_settings(**derived):
        from anymail.backends.postmark import EmailBackend

        assert type(get_connection()) is EmailBackend
        send_mail("direct", "body", "me@example.com", ["bob@example.com"])
    assert [p["Subject"] for p in postmark.received] == ["direct"]


def test_a_refused_token_raises_without_showing_it(
    postmark: PostmarkServer, postmark_token: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = postmark_token + "-wrong"
    container = Container(Config.load({"mailer": _block()}, {}))
    try:
        with override_settings(
            ANYMAIL={"POSTMARK_SERVER_TOKEN": wrong, "POSTMARK_API_URL": postmark.url}
        ):
            mailer = container.mailer()
            with pytest.raises(Exception) as caught:
                mailer.send("ann@example.com", "s", "b")
            quiet = get_connection(
                "toolkit_batteries.mailer.adapters.provider.ProviderMailer",
                fail_silently=True,
                backend_path=POSTMARK,
            )
            assert quiet.send_messages([EmailMessage("s", "b", to=["a@example.com"])]) == 0
    finally:
        container.close()
    assert "401" in str(caught.value)
    text = "".join(traceback.format_exception(caught.value)) + caplog.text
    assert wrong not in text and postmark_token not in text
    assert postmark.received == []


@pytest.mark.parametrize(
    "backend", ["", "no.such.Backend", "toolkit_batteries.mailer.options.MailerOptions"]
)
def test_a_bad_backend_option_is_refused_naming_the_field(backend: str) -> None:
    from toolkit_batteries.core.checks import service_checks

    block = {"adapter": "provider", "options": {"backend_path": backend}}
    with pytest.raises(InvalidOptionsError, match='"backend_path"'):
        django_email_settings({"mailer": block})
    with pytest.raises(InvalidOptionsError, match='"backend_path"'):
        Container(Config.load({"mailer": block}, {})).mailer()
    [found] = service_checks("mailer", Config.load({"mailer": block}, {}))
    assert found.id == "toolkit_mailer.E004"

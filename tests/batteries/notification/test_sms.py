"""What only the sms adapter has: the Messages API wire format, E.164, provider errors, SSRF."""

from __future__ import annotations

import base64
import logging
import time

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.loading import resolve_adapter
from toolkit_batteries.notification import (
    DeliveryRefusedError,
    InvalidNotificationError,
    NotificationUnavailableError,
)
from toolkit_batteries.notification.adapters.twilio import TwilioSMS

from .conftest import PHONE, open_block, sms_block
from .servers import ACCOUNT_SID, AUTH_TOKEN, FROM_NUMBER

MESSAGES = f"/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json"


def test_the_request_is_the_messages_api_with_basic_auth_and_a_form(sms_server):
    container, sms = open_block(sms_block(sms_server))
    receipt = sms.send(PHONE, "Your code is 424242")
    [seen] = sms_server.seen
    assert (seen.method, seen.path) == ("POST", MESSAGES)
    basic = base64.b64encode(f"{ACCOUNT_SID}:{AUTH_TOKEN}".encode()).decode()
    assert seen.headers["authorization"] == f"Basic {basic}"
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    assert seen.headers["accept"] == "application/json"
    assert seen.headers["user-agent"].startswith("twilio-python/")
    assert seen.form() == {"To": [PHONE], "From": [FROM_NUMBER], "Body": ["Your code is 424242"]}
    assert receipt.id == f"SM{1:032x}" and receipt.status == "queued"
    assert receipt.adapter == "sms"
    container.close()


def test_a_title_is_the_first_line_and_data_is_not_sent(sms_server):
    container, sms = open_block(sms_block(sms_server))
    sms.send(PHONE, "Deploy finished", title="CI", data={"build": "42"})
    assert sms_server.seen[0].form() == {
        "To": [PHONE],
        "From": [FROM_NUMBER],
        "Body": ["CI\nDeploy finished"],
    }
    container.close()


@pytest.mark.parametrize(
    "number",
    [
        "14155550123",  # no +
        "+04155550123",  # country code starting with 0
        "+1",  # too short
        "+1234567890123456",  # 16 digits
        "+1 415 555 0123",  # blanks
        "+1-415-555-0123",  # dashes
        "+1415555012a",
        "0044207946000",  # international prefix instead of +
        "",
    ],
)
def test_to_must_be_e164_and_is_never_echoed(sms_server, number):
    container, sms = open_block(sms_block(sms_server))
    with pytest.raises(InvalidNotificationError, match=r"E\.164") as caught:
        sms.send(number, "hello")
    assert caught.value.argument == "to"
    assert str(caught.value).startswith("notification.default: to is not an E.164")
    if number:
        assert number not in str(caught.value)
    assert sms_server.seen == []
    container.close()


@pytest.mark.parametrize("number", ["+442079460000", "+8613800138000", "+12", FROM_NUMBER])
def test_valid_e164_numbers_are_sent(sms_server, number):
    container, sms = open_block(sms_block(sms_server))
    sms.send(number, "hello")
    assert sms_server.seen[0].form()["To"] == [number]
    container.close()


@pytest.mark.parametrize("number", ["4155550100", "+0415", "+1 415"])
def test_from_number_must_be_e164_at_open(sms_server, number):
    with pytest.raises(InvalidOptionsError) as caught:
        open_block(sms_block(sms_server, from_number=number))
    assert caught.value.field == "sms.from_number"
    assert "E.164" in str(caught.value) and number not in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [("account_sid", ""), ("account_sid", "AC/../x"), ("auth_token", ""), ("from_number", "")],
)
def test_missing_or_bad_credentials_fail_the_open(sms_server, field, value):
    with pytest.raises(InvalidOptionsError) as caught:
        open_block(sms_block(sms_server, **{field: value}))
    assert caught.value.field == f"sms.{field}"


def test_a_refused_number_raises_the_code_but_not_the_providers_text(sms_server):
    sms_server.refuse.add(PHONE)
    container, sms = open_block(sms_block(sms_server))
    with pytest.raises(DeliveryRefusedError) as caught:
        sms.send(PHONE, "hello")
    error = caught.value
    assert (error.status, error.provider_code, error.code) == (400, "21211", "failed_precondition")
    assert "HTTP 400, code 21211" in str(error)
    assert PHONE not in str(error) and "valid phone number" not in str(error)
    container.close()


def test_a_wrong_auth_token_is_refused_and_names_the_options(sms_server):
    container, sms = open_block(sms_block(sms_server, auth_token="wrong-token-value"))
    with pytest.raises(DeliveryRefusedError) as caught:
        sms.send(PHONE, "hello")
    assert caught.value.status == 401 and caught.value.provider_code == "20003"
    assert "sms.auth_token" in str(caught.value)
    assert "wrong-token-value" not in str(caught.value)
    container.close()


@pytest.mark.parametrize("status", [429, 500, 503])
def test_throttling_and_server_errors_are_unavailable(sms_server, status):
    sms_server.force = (status, {"code": 20429, "message": "Too Many Requests", "status": status})
    container, sms = open_block(sms_block(sms_server))
    with pytest.raises(NotificationUnavailableError, match=f"HTTP {status}") as caught:
        sms.send(PHONE, "hello")
    assert caught.value.code == "service_unavailable"
    container.close()


def test_a_stopped_provider_is_unavailable(sms_server):
    container, sms = open_block(sms_block(sms_server))
    sms_server.stop()
    with pytest.raises(NotificationUnavailableError, match="connection failed"):
        sms.send(PHONE, "hello")
    container.close()


def test_ping_fetches_the_account(sms_server):
    container, sms = open_block(sms_block(sms_server))
    sms.ping()
    assert sms_server.paths() == [f"/2010-04-01/Accounts/{ACCOUNT_SID}.json"]
    sms_server.force = (503, {"code": 20503, "status": 503})
    with pytest.raises(NotificationUnavailableError):
        sms.ping()
    container.close()


def test_the_vendor_alias_opens_the_sms_adapter(sms_server):
    assert resolve_adapter("notification", "twilio") == ("sms", TwilioSMS)
    container, sms = open_block({**sms_block(sms_server), "adapter": "twilio"})
    assert isinstance(sms, TwilioSMS)
    sms.send(PHONE, "hello")
    assert sms_server.paths("POST") == [MESSAGES]
    container.close()


# ---------------------------------------------------------------------- outbound rules


@pytest.mark.parametrize(
    ("granted", "missing"),
    [("allow_insecure", "allow_private"), ("allow_private", "allow_insecure")],
    ids=["loopback-without-allow_private", "http-without-allow_insecure"],
)
def test_an_endpoint_is_refused_at_open_without_its_allowance(sms_server, granted, missing):
    block = sms_block(sms_server, relaxed=False)
    block["options"][granted] = True
    with pytest.raises(InvalidOptionsError) as caught:
        open_block(block)
    assert caught.value.field == "sms.endpoint" and missing in str(caught.value)
    assert "127.0.0.1" not in str(caught.value)
    assert sms_server.seen == []


def test_the_connection_is_refused_when_the_address_is_private(sms_server):
    # Past the open-time check (a name that resolves to loopback would get here): the
    # guarded transport refuses at connect time and the provider receives nothing.
    sms = TwilioSMS(
        account_sid=ACCOUNT_SID,
        auth_token=AUTH_TOKEN,
        from_number=FROM_NUMBER,
        endpoint=sms_server.url.replace("127.0.0.1", "localhost"),
        timeout=5,
        allow_insecure=True,
        allow_private=False,
    )
    with pytest.raises(InvalidOptionsError) as caught:
        sms.send(PHONE, "hello")
    assert caught.value.field == "sms.endpoint" and "allow_private" in str(caught.value)
    assert sms_server.seen == []
    sms.close()


def test_relaxed_rules_log_a_warning_at_open(sms_server, caplog):
    with caplog.at_level(logging.WARNING, logger="toolkit.notification"):
        container, _ = open_block(sms_block(sms_server))
    assert "allow_private is on" in caplog.text and "allow_insecure is on" in caplog.text
    container.close()


def test_title_and_body_together_must_fit_one_message(sms_server):
    container, sms = open_block(sms_block(sms_server))
    with pytest.raises(InvalidNotificationError, match="title and body together") as caught:
        sms.send(PHONE, "x" * 1595, title="Alert")
    assert caught.value.argument == "title"
    assert sms_server.seen == []
    container.close()


def test_a_stalled_provider_times_out_within_the_timeout(sms_server):
    block = sms_block(sms_server)
    block["options"]["timeout"] = "1s"
    container, sms = open_block(block)
    sms_server.delay = 3
    started = time.monotonic()
    with pytest.raises(NotificationUnavailableError, match="timed out"):
        sms.send(PHONE, "hello")
    assert time.monotonic() - started < 2.5
    container.close()

"""What only the log adapter has: how much of the recipient and the body it writes."""

from __future__ import annotations

import logging

import pytest

from toolkit_batteries.notification.adapters.log import LogNotification, mask

from .conftest import DEVICE, PHONE, open_block


def records(caplog):
    return [r for r in caplog.records if r.name == "toolkit.notification"]


def send_logged(caplog, options, to=PHONE, body="Your code is 424242", **kwargs):
    container, log = open_block({"adapter": "log", "options": {"log": options}})
    with caplog.at_level(logging.INFO, logger="toolkit.notification"):
        receipt = log.send(to, body, **kwargs)
    container.close()
    [record] = records(caplog)
    return receipt, record


def test_the_default_masks_the_recipient_and_keeps_a_plain_body(caplog):
    receipt, record = send_logged(caplog, {})
    assert record.levelno == logging.INFO
    assert record.to == "**********23" and PHONE not in record.getMessage()
    assert record.body == "Your code is 424242" and "424242" in record.getMessage()
    assert record.notification_id == receipt.id and receipt.status == "logged"
    assert (record.service, record.instance) == ("notification", "default")


def test_a_device_token_keeps_only_its_last_four_characters(caplog):
    _, record = send_logged(caplog, {}, to=DEVICE)
    assert record.to.endswith(DEVICE[-4:]) and set(record.to[:-4]) == {"*"}
    assert DEVICE not in record.getMessage()


@pytest.mark.parametrize(
    ("value", "masked"), [("ab", "**"), ("+123", "****"), ("+1234", "***34"), ("+12345", "****45")]
)
def test_short_recipients_are_masked_whole(value, masked):
    assert mask(value) == masked


def test_recipient_full_and_none(caplog):
    _, record = send_logged(caplog, {"recipient": "full"})
    assert record.to == PHONE and PHONE in record.getMessage()
    caplog.clear()
    _, record = send_logged(caplog, {"recipient": "none"})
    assert not hasattr(record, "to") and " to " not in record.getMessage()


def test_credentials_in_the_body_and_secret_data_keys_are_masked(caplog):
    body = "login at https://bob:hunter2@example.com with Bearer abc.def.ghi"
    _, record = send_logged(
        caplog, {}, body=body, title="token abc", data={"api_token": "t0k3n", "order": "A-17"}
    )
    text = record.getMessage()
    assert "hunter2" not in text and "abc.def.ghi" not in text
    assert record.data == {"api_token": "[redacted]", "order": "A-17"}
    assert "abc" not in record.title


def test_body_full_keeps_everything_but_secret_data_keys(caplog):
    _, record = send_logged(caplog, {"body": "full"}, body="Bearer abc.def", data={"token": "x"})
    assert record.body == "Bearer abc.def"
    assert record.data == {"token": "[redacted]"}


def test_body_none_logs_only_the_length_and_data_keys(caplog):
    _, record = send_logged(caplog, {"body": "none"}, data={"order": "A-17"})
    assert not hasattr(record, "body") and record.body_length == 19
    assert "424242" not in record.getMessage() and "(19 characters)" in record.getMessage()
    assert record.data == ["order"]


def test_nothing_is_formatted_when_info_is_off(caplog):
    log = LogNotification()
    with caplog.at_level(logging.WARNING, logger="toolkit.notification"):
        receipt = log.send(PHONE, "hello")
    assert receipt.status == "logged" and records(caplog) == []


def test_an_unknown_mode_fails_the_open():
    from toolkit_batteries.core.errors import InvalidOptionsError

    with pytest.raises(InvalidOptionsError, match=r"log\.recipient"):
        open_block({"adapter": "log", "options": {"log": {"recipient": "everything"}}})

"""One contract, run on every adapter (``log``, ``sms``, ``push``): what ``send`` promises.

Each test reads what was really delivered (the log record, or the request the local
provider received), and each refusal asserts that nothing was delivered.
"""

from __future__ import annotations

import pytest

from toolkit_batteries.notification import (
    InvalidNotificationError,
    Notification,
    NotificationError,
    Receipt,
)
from toolkit_batteries.notification.base import MAX_BODY_CHARS, MAX_DATA_BYTES


class TestNotificationContract:
    def test_send_delivers_the_body_to_the_recipient(self, opened):
        receipt = opened.notification.send(opened.to, "Your code is 424242")
        assert isinstance(opened.notification, Notification)
        assert isinstance(receipt, Receipt)
        assert receipt.adapter == opened.variant and receipt.id and receipt.status
        [message] = opened.delivered()
        assert message["to"] == opened.to
        assert message["body"] == "Your code is 424242"
        assert message["title"] == ""

    def test_a_title_travels_with_the_body(self, opened):
        opened.notification.send(opened.to, "The build is green", title="CI")
        [message] = opened.delivered()
        assert (message["title"], message["body"]) == ("CI", "The build is green")

    def test_each_send_gets_its_own_receipt(self, opened):
        first = opened.notification.send(opened.to, "one")
        second = opened.notification.send(opened.to, "two")
        assert first.id != second.id
        assert [m["body"] for m in opened.delivered()] == ["one", "two"]

    def test_unicode_bodies_arrive_intact(self, opened):
        opened.notification.send(opened.to, "Café ✓ 日本 — 🚀")
        assert opened.delivered()[0]["body"] == "Café ✓ 日本 — 🚀"

    def test_the_longest_body_is_accepted(self, opened):
        opened.notification.send(opened.to, "x" * MAX_BODY_CHARS)
        assert len(opened.delivered()[0]["body"]) == MAX_BODY_CHARS

    @pytest.mark.parametrize(
        ("body", "reason"),
        [
            ("", "non-empty"),
            ("   ", "non-empty"),
            (None, "non-empty"),
            ("x" * (MAX_BODY_CHARS + 1), "longer than"),
            ("a\x00b", "NUL"),
        ],
    )
    def test_a_bad_body_is_refused_and_nothing_is_sent(self, opened, body, reason):
        with pytest.raises(InvalidNotificationError, match=reason) as caught:
            opened.notification.send(opened.to, body)
        assert caught.value.argument == "body"
        assert "nothing was sent" in str(caught.value)
        assert opened.delivered() == []

    @pytest.mark.parametrize("title", ["two\nlines", "t" * 201, 5])
    def test_a_bad_title_is_refused(self, opened, title):
        with pytest.raises(InvalidNotificationError, match="title"):
            opened.notification.send(opened.to, "body", title=title)
        assert opened.delivered() == []

    @pytest.mark.parametrize(
        ("data", "reason"),
        [
            ({"n": 1}, "string values"),
            ({"": "v"}, "non-empty string keys"),
            ({"from": "x"}, "reserves"),
            ({"google.c.a": "x"}, "reserves"),
            ({"k": "v" * MAX_DATA_BYTES}, "larger than"),
            (["k", "v"], "mapping"),
        ],
    )
    def test_bad_data_is_refused(self, opened, data, reason):
        with pytest.raises(InvalidNotificationError, match=reason):
            opened.notification.send(opened.to, "body", data=data)
        assert opened.delivered() == []

    @pytest.mark.parametrize("to", ["", None, "has space", "tab\there", "x" * 4097, 14155550123])
    def test_a_malformed_recipient_is_refused_without_echoing_it(self, opened, to):
        with pytest.raises(InvalidNotificationError) as caught:
            opened.notification.send(to, "body")
        assert caught.value.argument == "to"
        if isinstance(to, str) and to:
            assert to not in str(caught.value)
        assert opened.delivered() == []

    def test_errors_are_notification_errors_with_a_stable_code(self, opened):
        with pytest.raises(NotificationError) as caught:
            opened.notification.send(opened.to, "")
        assert caught.value.code == "invalid_argument"
        assert str(caught.value).startswith("notification.default: ")

    def test_repr_names_the_instance_only(self, opened):
        text = repr(opened.notification)
        assert "notification.default" in text
        assert "secret" not in text and opened.to not in text

    def test_the_container_returns_one_object_per_instance(self, opened):
        assert opened.container.notification() is opened.notification

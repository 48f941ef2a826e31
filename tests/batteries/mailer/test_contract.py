"""One contract, run on every mailer adapter: log, smtp (real aiosmtpd, STARTTLS + AUTH),
memory (Django's locmem outbox)."""

from __future__ import annotations

import pytest
from django.core import mail
from django.core.mail import EmailMessage, get_connection, mail_admins, send_mail
from django.test import override_settings

from toolkit_batteries.mailer import (
    Attachment,
    InvalidMessageError,
    Mailer,
    MessageTooLargeError,
    django_email_settings,
)

from .conftest import Opened


class TestMailerContract:
    def test_the_accessor_is_a_django_email_backend_of_the_adapter(self, opened: Opened) -> None:
        from django.core.mail.backends.base import BaseEmailBackend

        mailer = opened.mailer
        assert isinstance(mailer, Mailer) and isinstance(mailer, BaseEmailBackend)
        assert mailer.adapter_name == opened.variant
        assert mailer.instance == "default"

    def test_send_delivers_one_message_and_returns_its_message_id(self, opened: Opened) -> None:
        message_id = opened.mailer.send(
            "ann@example.com",
            "Welcome",
            "Hello Ann,\nclick the link.",
            from_email="noreply@example.com",
            cc=["cc@example.com"],
            bcc=["bcc@example.com"],
        )
        assert message_id.startswith("<") and message_id.endswith(">")
        [got] = opened.delivered(1)
        assert got.mail_from == "noreply@example.com"
        assert sorted(got.recipients) == ["ann@example.com", "bcc@example.com", "cc@example.com"]
        assert got.subject == "Welcome"
        assert "click the link." in got.body

    def test_html_alternative_and_attachment_are_accepted(self, opened: Opened) -> None:
        opened.mailer.send(
            ["bob@example.com"],
            "Report",
            "plain text",
            html="<p>rich <b>text</b></p>",
            attachments=[Attachment("r.csv", "a,b\n1,2\n", "text/csv")],
        )
        [got] = opened.delivered(1)
        assert got.recipients == ["bob@example.com"]
        assert "plain text" in got.body
        if opened.variant == "log":  # names and sizes, never content
            assert got.attachments == [("r.csv", "text/csv", b"8")]
        else:
            assert got.html == "<p>rich <b>text</b></p>"
            assert got.attachments == [("r.csv", "text/csv", b"a,b\n1,2\n")]

    def test_a_binary_attachment_arrives_byte_for_byte(self, opened: Opened) -> None:
        payload = bytes(range(256)) * 4
        opened.mailer.send(
            ["bob@example.com"],
            "Binary",
            "see attached",
            attachments=[Attachment("blob.bin", payload, "application/octet-stream")],
        )
        [got] = opened.delivered(1)
        expected = str(len(payload)).encode() if opened.variant == "log" else payload
        assert got.attachments == [("blob.bin", "application/octet-stream", expected)]

    def test_send_messages_counts_and_skips_messages_without_recipients(
        self, opened: Opened
    ) -> None:
        messages = [
            EmailMessage("one", "1", "a@example.com", ["x@example.com"]),
            EmailMessage("two", "2", "a@example.com", ["y@example.com"]),
            EmailMessage("none", "3", "a@example.com", []),
        ]
        assert opened.mailer.send_messages(messages) == 2
        assert sorted(d.subject for d in opened.delivered(2)) == ["one", "two"]
        assert opened.mailer.send_messages([]) == 0

    def test_invalid_messages_are_refused_before_anything_is_sent(self, opened: Opened) -> None:
        with pytest.raises(InvalidMessageError, match="recipient"):
            opened.mailer.send([], "s", "b")
        with pytest.raises(InvalidMessageError, match="line break"):
            opened.mailer.send("a@example.com", "s\nBcc: evil@example.com", "b")
        with pytest.raises(InvalidMessageError, match="line break"):
            opened.mailer.send("a@example.com", "s", "b", headers={"X-T": "a\r\nB: c"})
        assert opened.delivered() == []

    def test_a_message_over_max_message_size_is_refused_and_nothing_delivered(
        self, opened: Opened, request: pytest.FixtureRequest
    ) -> None:
        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        from .conftest import mailer_block

        block = mailer_block(opened.variant, request, max_message_size=2048)
        container = Container(Config.load({"mailer": block}, {}))
        try:
            mailer = container.mailer()
            before = opened.server.connections if opened.server else 0
            with pytest.raises(MessageTooLargeError) as caught:
                mailer.send("a@example.com", "big", "x" * 4096)
            assert caught.value.limit == 2048 and caught.value.size > 4096
            assert "2048" in str(caught.value)
            # fail_silently drops the oversize message, still without connecting
            quiet = get_connection(
                type(mailer).__module__ + "." + type(mailer).__name__,
                fail_silently=True,
                options=mailer.options,
            )
            assert quiet.send_messages([EmailMessage("big", "x" * 4096, to=["a@example.com"])]) == 0
            assert mailer.send("a@example.com", "small", "fits")
            delivered = opened.delivered(1)
            assert [d.subject for d in delivered] == ["small"]
            if opened.server:
                assert opened.server.connections == before + 1  # only the small one connected
        finally:
            container.close()

    def test_send_mail_and_mail_admins_use_the_configured_backend(self, opened: Opened) -> None:
        derived = django_email_settings({"mailer": opened.block})
        with override_settings(
            **derived, ADMINS=[("Ops", "ops@example.com")], SERVER_EMAIL="server@example.com"
        ):
            mail.outbox = []
            expected = type(opened.mailer)
            if opened.variant == "provider":  # Django's helpers call anymail's backend itself
                expected = type(opened.mailer.delegate)
            assert type(get_connection()) is expected
            assert send_mail("Hi", "from send_mail", "s@example.com", ["to@example.com"]) == 1
            mail_admins("Alert", "from mail_admins")
            delivered = opened.delivered(2)
        assert [d.subject for d in delivered] == ["Hi", "[Django] Alert"]
        assert delivered[1].recipients == ["ops@example.com"]

    def test_with_block_reuses_one_backend(self, opened: Opened) -> None:
        with opened.mailer as connection:
            connection.send("a@example.com", "1", "b")
            connection.send("a@example.com", "2", "b")
        assert [d.subject for d in opened.delivered(2)] == ["1", "2"]
        if opened.server:
            assert len({r.login for r in opened.server.received}) == 1

    def test_repr_and_logs_never_show_the_password(
        self, opened: Opened, smtp_password: str, postmark_token: str, caplog
    ) -> None:
        import logging

        caplog.set_level(logging.DEBUG)
        mailer = opened.mailer
        mailer.send("a@example.com", "s", "b")
        opened.delivered(1)
        for secret in (smtp_password, postmark_token):
            assert secret not in repr(mailer)
            assert secret not in repr(mailer.options)
            assert secret not in caplog.text
            for record in [*opened.records.records, *caplog.records]:
                assert secret not in record.getMessage()
                assert secret not in repr(record.__dict__)

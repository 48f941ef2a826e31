"""The battery through Django: ``services.notification()`` from ``settings.TOOLKIT``, checks."""

from __future__ import annotations

import logging

from django.core import checks
from django.test import override_settings

from toolkit_batteries import services
from toolkit_batteries.notification.adapters.log import LogNotification
from toolkit_batteries.notification.adapters.twilio import TwilioSMS

from .conftest import PHONE, sms_block


def test_the_default_is_the_log_adapter(caplog):
    with override_settings(TOOLKIT={"notification": {"adapter": "log"}}):
        notification = services.notification()
        assert isinstance(notification, LogNotification)
        with caplog.at_level(logging.INFO, logger="toolkit.notification"):
            receipt = notification.send(PHONE, "hello from Django")
    [record] = [r for r in caplog.records if r.name == "toolkit.notification"]
    assert record.notification_id == receipt.id and record.body == "hello from Django"


def test_a_named_sms_instance_sends_through_the_provider(sms_server):
    toolkit = {"notification": {"default": {"adapter": "log"}, "texts": sms_block(sms_server)}}
    with override_settings(TOOLKIT=toolkit):
        texts = services.notification("texts")
        assert isinstance(texts, TwilioSMS)
        receipt = texts.send(PHONE, "hello")
    assert receipt.adapter == "sms"
    assert sms_server.seen[0].form()["To"] == [PHONE]


def test_manage_py_check_reports_the_battery_checks():
    with override_settings(TOOLKIT={"notification": {"adapter": "sms"}}):
        found = checks.run_checks()
    ids = [m.id for m in found if m.id and m.id.startswith("toolkit_notification")]
    assert ids.count("toolkit_notification.E002") == 3

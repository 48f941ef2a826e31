"""The notification adapters. Provider modules and classes are named after the product
(``twilio.TwilioSMS``, ``fcm.FCMPush``; aliases ``twilio`` and ``fcm`` from the catalog
row); the text-message SDK, httpx and PyJWT cost nothing to a project on ``log``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "log.LogNotification sms=twilio.TwilioSMS push=fcm.FCMPush")

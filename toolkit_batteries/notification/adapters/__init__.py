"""The notification adapters, by canonical name (default first, as in the catalog).

Provider modules and classes are named after the product (``twilio.TwilioSMS``,
``fcm.FCMPush``); the canonical names stay the spec's neutral words, and the product
names ``twilio`` and ``fcm`` are aliases from the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`. Values are dotted paths, imported only when an
adapter opens, so the text-message SDK, httpx and PyJWT cost nothing to a project on
the ``log`` adapter.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "log": "toolkit_batteries.notification.adapters.log.LogNotification",
    "sms": "toolkit_batteries.notification.adapters.twilio.TwilioSMS",
    "push": "toolkit_batteries.notification.adapters.fcm.FCMPush",
}

"""The notification adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so the text-message SDK,
httpx and PyJWT cost nothing to a project on the ``log`` adapter.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "log": "toolkit_batteries.notification.adapters.log.LogNotification",
    "sms": "toolkit_batteries.notification.adapters.sms.SMSNotification",
    "push": "toolkit_batteries.notification.adapters.push.PushNotification",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {}

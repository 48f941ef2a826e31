"""Options of the ``notification`` service; provider options nest under their names.

Beyond the spec's table (see ``DELIBERATE_EXTRAS`` in the tree tests): ``allow_insecure``
and ``allow_private`` (the outbound rules of ``sms`` and ``push``), ``sms.endpoint`` and
``push.endpoint`` (the provider's API base URL, a local server in tests) and the ``log.``
block (how much of a recipient and a body the ``log`` adapter writes).
"""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import (
    file_exists,
    matches,
    positive,
    private_file,
    required,
    url,
)
from toolkit_batteries.core.options import Duration, option, options_class

from .base import E164

__all__ = [
    "DEFAULT_PUSH_ENDPOINT",
    "DEFAULT_SMS_ENDPOINT",
    "LogOptions",
    "NotificationOptions",
    "PushOptions",
    "SMSOptions",
]

#: The text-message provider's REST API base URL (``sms.endpoint`` unset).
DEFAULT_SMS_ENDPOINT = "https://api.twilio.com"
#: The push service's HTTP v1 API base URL (``push.endpoint`` unset).
DEFAULT_PUSH_ENDPOINT = "https://fcm.googleapis.com"


_SMS_HINT = (
    "set sms.account_sid, sms.auth_token (a secret: use the environment) and "
    "sms.from_number (E.164, e.g. +14155550100)"
)


@options_class
class LogOptions:
    """The ``log.`` block: what the ``log`` adapter writes about each notification."""

    recipient: str = option(
        "masked",
        doc="masked (all but the last characters hidden), full, or none",
        choices=("masked", "full", "none"),
    )
    body: str = option(
        "redacted",
        doc="redacted (credentials masked), full, or none (only the length)",
        choices=("redacted", "full", "none"),
    )


@options_class
class SMSOptions:
    """The ``sms.`` block: a text-message provider with basic authentication."""

    account_sid: str = option("", doc="account id for basic auth and the URL path")
    auth_token: str = option("", secret=True, doc="auth token for basic auth")
    from_number: str = option("", doc="sender phone number in E.164 format")
    endpoint: str = option("", doc="overrides the provider's REST API base URL")


@options_class
class PushOptions:
    """The ``push.`` block: a mobile push provider."""

    project_id: str = option("", doc="project id")
    service_account: str = option("", doc="path to the service-account JSON key file")
    endpoint: str = option("", doc="overrides the push service's HTTP v1 API base URL")


_URL_HINT = (
    "use an https:// URL; http needs allow_insecure and a loopback or private host allow_private"
)


@options_class
class NotificationOptions(OutboundSwitches):
    """Options of ``notification``; adapters ``log`` (default), ``sms`` and ``push``."""

    __checks__ = (
        positive(
            "toolkit_notification.E005",
            adapters=("sms", "push"),
            hint="use a positive duration, or leave it unset for the default (30s)",
        ).on("timeout"),
        required("toolkit_notification.E002", "is required", adapters=("sms",), hint=_SMS_HINT).on(
            "sms.account_sid", "sms.auth_token", "sms.from_number"
        ),
        matches(
            "toolkit_notification.E002",
            E164.pattern,
            "is not an E.164 phone number",
            adapters=("sms",),
            hint=_SMS_HINT,
        ).on("sms.from_number"),
        file_exists(
            "toolkit_notification.E003",
            missing="is required",
            adapters=("push",),
            hint="set it to the path of the service-account JSON key file",
        ).on("push.service_account"),
        private_file(
            "toolkit_notification.W001", adapters=("push",), hint="chmod 600 the key file"
        ).on("push.service_account"),
        url(
            "toolkit_notification.E004",
            default=DEFAULT_SMS_ENDPOINT,
            adapters=("sms",),
            hint=_URL_HINT,
        ).on("sms.endpoint"),
        url(
            "toolkit_notification.E004",
            default=DEFAULT_PUSH_ENDPOINT,
            adapters=("push",),
            hint=_URL_HINT,
        ).on("push.endpoint"),
    )

    timeout: Duration = option(timedelta(seconds=30), doc="operation timeout")
    sms: SMSOptions = option(SMSOptions(), doc="options of the sms adapter")
    push: PushOptions = option(PushOptions(), doc="options of the push adapter")
    log: LogOptions = option(LogOptions(), doc="options of the log adapter")

"""Options of the ``notification`` service; provider options nest under their names."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["NotificationOptions", "PushOptions", "SMSOptions"]


@options_class
class SMSOptions:
    """The ``sms.`` block: a text-message provider with basic authentication."""

    account_sid: str = option("", doc="account id for basic auth and the URL path")
    auth_token: str = option("", secret=True, doc="auth token for basic auth")
    from_number: str = option("", doc="sender phone number in E.164 format")


@options_class
class PushOptions:
    """The ``push.`` block: a mobile push provider."""

    project_id: str = option("", doc="project id")
    service_account: str = option("", doc="path to the service-account JSON key file")


@options_class
class NotificationOptions:
    """Options of ``notification``; adapters ``log`` (default), ``sms`` and ``push``."""

    timeout: Duration = option(timedelta(seconds=30), doc="operation timeout")
    sms: SMSOptions = option(SMSOptions(), doc="options of the sms adapter")
    push: PushOptions = option(PushOptions(), doc="options of the push adapter")

"""Twilio (adapter ``twilio``, canonical ``sms``): the Messages API, through its official SDK.

Wire format (the provider's documented 2010-04-01 REST API, as the ``twilio`` SDK sends it):

* ``POST {endpoint}/2010-04-01/Accounts/{AccountSid}/Messages.json`` with HTTP Basic
  authentication (``sms.account_sid`` : ``sms.auth_token``) and a form body ``To``,
  ``From`` (``sms.from_number``) and ``Body``; ``201`` answers the message resource
  (``sid`` ``SM...``, ``status`` ``queued``...).
* Errors answer ``{"code": 21211, "message": ..., "more_info": ..., "status": 400}``. A 4xx
  other than 429 raises :class:`~..base.DeliveryRefusedError` with the status and the
  numeric code (never the provider's message, which quotes the number); 429, 5xx and
  connection failures raise :class:`~..base.NotificationUnavailableError`.
* :meth:`TwilioSMS.ping` fetches ``GET .../Accounts/{AccountSid}.json``: the
  cheapest call that proves the credentials.

Both numbers are checked as E.164 before anything is sent (``to`` per message,
``sms.from_number`` at open). A title, when given, is the body's first line; ``data`` has
no place in a text message and is not sent.

The SDK's own HTTP client is kept (its request building, retries off) with its requests
session swapped for the toolkit's guarded one: https only unless ``allow_insecure``, no
private or loopback address unless ``allow_private`` (judged on the resolved addresses
when connecting), no redirects, no environment proxies. The auth token never appears in
a repr, a log line or an error.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced

# The SDK first: a missing sms extra is reported before the battery modules load.
with MissingExtraError.guard("notification", "sms", "sms", "twilio"):
    import requests
    from twilio.base.exceptions import TwilioException
    from twilio.http.http_client import TwilioHttpClient
    from twilio.rest import Client

from ..base import (
    MAX_BODY_CHARS,
    InvalidNotificationError,
    Notification,
    NotificationUnavailableError,
    Outgoing,
    Receipt,
    check_e164,
)
from ..options import DEFAULT_SMS_ENDPOINT
from ..outbound import check_url, warn_relaxed
from ._common import failure

__all__ = ["TwilioSMS"]

#: What a send or a ping can raise besides a bug: the SDK's errors, the transport's, the guard's.
_FAILURES = (TwilioException, requests.RequestException, OutboundBlockedError, ValueError)
_SID = re.compile(r"[A-Za-z0-9]{2,64}")


@traced("_send", "ping")
class TwilioSMS(Notification):
    """Text messages through the provider's Messages API."""

    adapter_name: ClassVar[str] = "sms"

    def __init__(
        self,
        *,
        account_sid: str,
        auth_token: str,
        from_number: str,
        endpoint: str = DEFAULT_SMS_ENDPOINT,
        timeout: float = 30.0,
        allow_insecure: bool = False,
        allow_private: bool = False,
        instance: str = "default",
    ) -> None:
        super().__init__(instance=instance)
        self.from_number = from_number
        http = TwilioHttpClient(timeout=timeout)
        if http.session is not None:
            http.session.close()  # the SDK's own session: replaced before any use
        http.session = provider.requests_session(
            provider.Endpoint(
                endpoint, "notification", "sms.endpoint", instance, allow_insecure, allow_private
            )
        )
        # A non-empty environment: the SDK would otherwise read TWILIO_EDGE/TWILIO_REGION
        # from os.environ and rewrite the configured host.
        client = Client(
            account_sid, auth_token, http_client=http, environment={"TOOLKIT": "notification"}
        )
        client.api.base_url = endpoint
        self._http = http
        self._account = client.api.v2010.accounts(account_sid)
        self._messages = self._account.messages

    @classmethod
    def open(cls, ctx: OpenContext) -> TwilioSMS:
        options, instance = ctx.options, ctx.instance
        sms = options.sms
        if not _SID.fullmatch(sms.account_sid or ""):
            raise InvalidOptionsError(
                "notification",
                "sms.account_sid",
                "is required (letters and digits, e.g. AC followed by 32 hex digits)",
                instance=instance,
            )
        if not sms.auth_token:
            raise InvalidOptionsError(
                "notification", "sms.auth_token", "is required", instance=instance
            )
        if not sms.from_number:
            raise InvalidOptionsError(
                "notification", "sms.from_number", "is required", instance=instance
            )
        check_e164(sms.from_number, instance=instance, argument="sms.from_number", option=True)
        allow_insecure, allow_private = bool(options.allow_insecure), bool(options.allow_private)
        endpoint = check_url(
            sms.endpoint or DEFAULT_SMS_ENDPOINT,
            "sms.endpoint",
            allow_insecure=allow_insecure,
            allow_private=allow_private,
            instance=instance,
        )
        timeout = provider.positive(
            options.timeout, service="notification", field="timeout", instance=instance
        )
        warn_relaxed(ctx, allow_insecure=allow_insecure, allow_private=allow_private)
        return cls(
            account_sid=sms.account_sid,
            auth_token=sms.auth_token,
            from_number=sms.from_number,
            endpoint=endpoint,
            timeout=timeout,
            allow_insecure=allow_insecure,
            allow_private=allow_private,
            instance=instance,
        )

    def close(self) -> None:
        session = self._http.session
        if session is not None:
            session.close()

    def _check_recipient(self, to: Any) -> str:
        return check_e164(to, instance=self.instance, argument="to")

    def _send(self, message: Outgoing) -> Receipt:
        body = f"{message.title}\n{message.body}" if message.title else message.body
        if len(body) > MAX_BODY_CHARS:
            raise InvalidNotificationError(
                self.instance,
                "title",
                f"and body together are longer than {MAX_BODY_CHARS} characters",
            )
        try:
            sent = self._messages.create(to=message.to, from_=self.from_number, body=body)
        except _FAILURES as exc:
            raise self._error(exc) from None
        return Receipt(str(sent.sid or ""), "sms", str(sent.status or "queued"))

    def ping(self) -> None:
        """Fetch the account resource; raise ``NotificationUnavailableError`` on failure."""
        try:
            self._account.fetch()
        except _FAILURES as exc:
            error = self._error(exc)
            if isinstance(error, NotificationUnavailableError):
                raise error from None
            raise NotificationUnavailableError(self.instance, str(error.args[0])) from None

    def _error(self, exc: Exception) -> Exception:
        """Translate an SDK or transport failure into the battery's error (no number, token)."""
        return failure(
            self.instance,
            "sms",
            exc,
            field="sms.endpoint",
            who="the sms provider",
            code=str(getattr(exc, "code", "") or ""),
            auth_hint="check sms.account_sid and sms.auth_token",
        )

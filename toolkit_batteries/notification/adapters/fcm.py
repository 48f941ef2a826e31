"""Firebase Cloud Messaging (adapter ``fcm``, canonical ``push``): HTTP v1 API, service account.

Wire format (the push service's documented HTTP v1 API and OAuth 2.0 service-account flow):

* **Token.** The service-account key file (``push.service_account``: ``client_email``,
  ``private_key``, ``private_key_id``, ``token_uri``, ``project_id``) signs an RS256 JWT
  assertion (``iss`` the client email, ``scope`` :data:`SCOPE`, ``aud`` the token URI,
  one hour, ``kid`` the key id) that is POSTed form-encoded to ``token_uri`` with
  ``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer``. The answer's
  ``access_token`` is reused until a minute before its ``expires_in``, and dropped when
  the API answers 401 (then fetched again, once, for the same message).
* **Send.** ``POST {endpoint}/v1/projects/{project_id}/messages:send`` with
  ``Authorization: Bearer <token>`` and ``{"message": {"token": <device token>` (or
  ``"topic"`` for ``to="topic:<name>"``) ``, "notification": {"title", "body"},
  "data": {...}}}``; ``200`` answers ``{"name": "projects/<p>/messages/<id>"}``.
* **Errors** answer ``{"error": {"code", "message", "status", "details": [{"@type":
  ".../google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}}``. A 4xx other
  than 429 raises :class:`~..base.DeliveryRefusedError` carrying the ``errorCode`` (else
  the ``status``); 429, 5xx and connection failures raise
  :class:`~..base.NotificationUnavailableError`.

Token URI and endpoint are https only unless ``allow_insecure`` and never reach a
loopback, private or link-local address (judged on the resolved addresses when
connecting) unless ``allow_private``; redirects and environment proxies are not followed.
The private key, the assertion and the access token never appear in a repr, a log line or
an error.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any, ClassVar
from urllib.parse import quote

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.outbound.service_account import (
    DEFAULT_TOKEN_URI,
    ServiceAccount,
    TokenCache,
)
from toolkit_batteries.core.tracing import traced

from ..base import (
    DeliveryRefusedError,
    InvalidNotificationError,
    Notification,
    NotificationError,
    NotificationUnavailableError,
    Outgoing,
    Receipt,
)
from ..options import DEFAULT_PUSH_ENDPOINT
from ..outbound import check_url, warn_relaxed
from ._common import failure, refusal

with MissingExtraError.guard("notification", "push", "push", "httpx, pyjwt"):
    import httpx
    import jwt as pyjwt

__all__ = ["DEFAULT_TOKEN_URI", "SCOPE", "SEND_PATH", "FCMPush"]

#: OAuth scope of the access token.
SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
#: Token URI used when the key file names none.
#: The send method's path under the endpoint (``{project}`` is URL-quoted).
SEND_PATH = "/v1/projects/{project}/messages:send"
#: Largest answer read from the token URI or the API.
MAX_ANSWER_BYTES = 1024 * 1024
_TOPIC = re.compile(r"[a-zA-Z0-9\-_.~%]{1,900}")
_FIELD = "push.service_account"
#: What a send or a token exchange can raise besides a bug.
_FAILURES = (httpx.HTTPError, OSError, ValueError, pyjwt.PyJWTError, OutboundBlockedError)


class _Unauthorized(Exception):
    """The API answered 401: the cached token is no longer good."""


@traced("_send", "ping")
class FCMPush(Notification):
    """Push notifications through the push service's HTTP v1 ``messages:send``."""

    adapter_name: ClassVar[str] = "push"

    def __init__(
        self,
        *,
        account: ServiceAccount,
        project_id: str,
        endpoint: str = DEFAULT_PUSH_ENDPOINT,
        timeout: float = 30.0,
        allow_insecure: bool = False,
        allow_private: bool = False,
        instance: str = "default",
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(instance=instance)
        self._tokens = TokenCache(account, SCOPE)
        self.project_id = project_id
        self._url = endpoint + SEND_PATH.format(project=quote(project_id, safe=""))
        self.clock = clock
        rules = provider.Endpoint(
            endpoint, "notification", "push.endpoint", instance, allow_insecure, allow_private
        )
        self._client = provider.httpx_client(rules, timeout=timeout, max_connections=10)

    @classmethod
    def open(cls, ctx: OpenContext) -> FCMPush:
        options, instance = ctx.options, ctx.instance
        push = options.push
        allow_insecure, allow_private = bool(options.allow_insecure), bool(options.allow_private)
        account = ServiceAccount(
            push.service_account, service="notification", field=_FIELD, instance=instance
        )
        project_id = account.project(push.project_id, field="push.project_id")
        rules = {"allow_insecure": allow_insecure, "allow_private": allow_private}
        endpoint = check_url(
            push.endpoint or DEFAULT_PUSH_ENDPOINT, "push.endpoint", instance=instance, **rules
        )
        account.token_uri = check_url(account.token_uri, _FIELD, instance=instance, **rules)
        timeout = provider.positive(
            options.timeout, service="notification", field="timeout", instance=instance
        )
        warn_relaxed(ctx, **rules)
        return cls(
            account=account,
            project_id=project_id,
            endpoint=endpoint,
            timeout=timeout,
            instance=instance,
            **rules,
        )

    def close(self) -> None:
        self._client.close()

    # ------------------------------------------------------------------ recipients

    def _check_recipient(self, to: Any) -> str:
        to = super()._check_recipient(to)
        if to.startswith("topic:") and not _TOPIC.fullmatch(to[6:]):
            raise InvalidNotificationError(
                self.instance, "to", "names a topic with characters outside [a-zA-Z0-9-_.~%]"
            )
        return to

    # ------------------------------------------------------------------ sending

    def _send(self, message: Outgoing) -> Receipt:
        target = (
            {"topic": message.to[6:]} if message.to.startswith("topic:") else {"token": message.to}
        )
        note = {"body": message.body}
        if message.title:
            note = {"title": message.title, "body": message.body}
        payload: dict[str, Any] = {**target, "notification": note}
        if message.data:
            payload["data"] = dict(message.data)
        content = json.dumps({"message": payload}, separators=(",", ":")).encode()
        try:
            try:
                answer = self._post(content)
            except _Unauthorized:
                answer = self._post(content)  # the token was revoked or expired early
        except _Unauthorized:
            raise DeliveryRefusedError(
                self.instance, "push", 401, "UNAUTHENTICATED", "check push.service_account"
            ) from None
        except _FAILURES as exc:
            raise self._error(exc) from None
        name = answer.get("name") if isinstance(answer, dict) else None
        if not isinstance(name, str) or not name:
            raise NotificationUnavailableError(
                self.instance, "the push service answered without a message name"
            )
        return Receipt(name, "push", "accepted")

    def _post(self, content: bytes) -> Any:
        token = self._access_token()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        with self._client.stream("POST", self._url, content=content, headers=headers) as answer:
            status = answer.status_code
            if status == 200:
                return _read(answer)
            if status == 401:
                self._tokens.forget(token)
                raise _Unauthorized
            detail = _read_error(answer)
        raise refusal(self.instance, "push", status, detail, who="the push service")

    # ------------------------------------------------------------------ the token

    def _access_token(self) -> str:
        return self._tokens.get(self._exchange, self._no_token, self.clock)

    def _exchange(self, token_uri: str, form: dict[str, str]) -> Any:
        with self._client.stream("POST", token_uri, data=form) as response:
            if response.status_code == 200:
                return _read(response)
            error = _read_oauth_error(response)
            reason = f"the token URI answered HTTP {response.status_code}"
            if error:
                reason += f" ({error})"
            if 400 <= response.status_code < 500:
                raise DeliveryRefusedError(
                    self.instance,
                    "push",
                    response.status_code,
                    error,
                    f"the token exchange failed; check {_FIELD}",
                )
            raise NotificationUnavailableError(self.instance, reason)

    def _no_token(self) -> NotificationError:
        return NotificationUnavailableError(
            self.instance, "the token URI answered without an access token"
        )

    def ping(self) -> None:
        """Obtain (or reuse) an access token; raise ``NotificationUnavailableError`` if not."""
        try:
            self._access_token()
        except NotificationUnavailableError:
            raise
        except NotificationError as exc:
            raise NotificationUnavailableError(self.instance, str(exc.args[0])) from None
        except _FAILURES as exc:
            error = self._error(exc)
            raise NotificationUnavailableError(self.instance, str(error.args[0])) from None

    def _error(self, exc: BaseException) -> NotificationError | InvalidOptionsError:
        """Translate a transport or key failure (never a URL, token or key in the text)."""
        if isinstance(exc, pyjwt.PyJWTError):
            return InvalidOptionsError(
                "notification",
                _FIELD,
                "holds a private key that cannot sign",
                instance=self.instance,
            )
        return failure(
            self.instance,
            "push",
            exc,
            field="push.endpoint or the token URI",
            who="the push service",
        )


def _read(response: httpx.Response) -> Any:
    """Read a JSON answer of at most :data:`MAX_ANSWER_BYTES`."""
    return provider.read_json(response, MAX_ANSWER_BYTES)


def _read_error(response: httpx.Response) -> str:
    """Return the API error's ``errorCode`` (else its ``status``), or an empty string."""
    try:
        error = _read(response).get("error") or {}
    except (ValueError, AttributeError, httpx.HTTPError):
        return ""
    if not isinstance(error, dict):
        return ""
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and isinstance(detail.get("errorCode"), str):
            return _word(detail["errorCode"])
    return _word(error.get("status"))


def _read_oauth_error(response: httpx.Response) -> str:
    """Return the OAuth error name (``invalid_grant``...), or an empty string."""
    try:
        answer = _read(response)
    except (ValueError, httpx.HTTPError):
        return ""
    return _word(answer.get("error")) if isinstance(answer, dict) else ""


def _word(value: Any) -> str:
    """Return ``value`` if it is a short identifier (provider codes only, never free text)."""
    return value if isinstance(value, str) and re.fullmatch(r"[A-Za-z_]{1,64}", value) else ""

"""The one error mapping of the ``sms`` and ``push`` adapters, on the provider base.

:func:`refusal` turns an error status into :class:`~..base.DeliveryRefusedError` (a 4xx
other than 429: sending again would fail again) or
:class:`~..base.NotificationUnavailableError` (429, 5xx); :func:`failure` does the same
for anything an SDK or the transport raised, read by
:func:`toolkit_batteries.core.outbound.provider.failure_of` (a refused address is the
``blocked_error`` of the field that named it; a time-out, a lost connection or an answer
that could not be read are ``NotificationUnavailableError``). Messages carry the status
and the provider's short error code, never its free text, a number, a token or a URL.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import provider

from ..base import DeliveryRefusedError, NotificationError, NotificationUnavailableError
from ..outbound import blocked_error

__all__ = ["failure", "refusal"]


def refusal(
    instance: str, channel: str, status: int, code: str, *, who: str, auth_hint: str = ""
) -> NotificationError:
    """Return the error of an error status ``status`` answered by ``who``."""
    kind = provider.kind_of_status(status)
    if kind is provider.Kind.AUTH and auth_hint:
        return DeliveryRefusedError(instance, channel, status, code, auth_hint)
    if 400 <= status < 500 and kind is not provider.Kind.RATE_LIMITED:
        return DeliveryRefusedError(instance, channel, status, code)
    detail = f" ({code})" if code else ""
    return NotificationUnavailableError(instance, f"{who} answered HTTP {status}{detail}")


def failure(
    instance: str,
    channel: str,
    exc: BaseException,
    *,
    field: str,
    who: str,
    code: str = "",
    auth_hint: str = "",
) -> NotificationError | InvalidOptionsError:
    """Return the battery's error for ``exc`` raised while talking to ``who``."""
    found = provider.failure_of(exc)
    if found is None:
        return NotificationUnavailableError(instance, f"{who}'s answer could not be read")
    if found.kind is provider.Kind.BLOCKED:
        return blocked_error(field, instance)
    if found.status is not None:
        return refusal(instance, channel, found.status, code, who=who, auth_hint=auth_hint)
    if found.kind is provider.Kind.TIMEOUT:
        return NotificationUnavailableError(instance, f"{who} timed out")
    return NotificationUnavailableError(instance, f"connection failed: {type(exc).__name__}")

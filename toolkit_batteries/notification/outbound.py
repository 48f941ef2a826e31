"""Outbound URL rules of ``sms`` and ``push``: the shared rules, named for ``notification``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import check_url as _check_url

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["blocked_error", "check_url", "warn_relaxed"]


def check_url(
    url: str, field: str, *, allow_insecure: bool, allow_private: bool, instance: str
) -> str:
    """Return ``url`` (no trailing ``/``) if the outbound rules allow it, else raise.

    See :func:`toolkit_batteries.core.outbound.check_url`; errors name
    ``notification.<instance>`` and ``field``, never the URL.
    """
    return _check_url(
        url,
        service="notification",
        field=field,
        instance=instance,
        allow_insecure=allow_insecure,
        allow_private=allow_private,
        insecure_option="allow_insecure",
        private_option="allow_private",
    ).rstrip("/")


def blocked_error(field: str, instance: str) -> InvalidOptionsError:
    """Return the error for a target that resolved to a refused address at connect time."""
    return InvalidOptionsError(
        "notification",
        field,
        "resolves to a private, loopback or link-local address; set allow_private to "
        "permit it (nothing was sent)",
        instance=instance,
    )


def warn_relaxed(ctx: OpenContext, *, allow_insecure: bool, allow_private: bool) -> None:
    """Log the warning the outbound rules ask for when a guard is relaxed."""
    if allow_private:
        ctx.logger.warning(
            "notification.%s: allow_private is on: private, loopback and link-local "
            "addresses may be dialed",
            ctx.instance,
        )
    if allow_insecure:
        ctx.logger.warning(
            "notification.%s: allow_insecure is on: plain http endpoints are permitted",
            ctx.instance,
        )

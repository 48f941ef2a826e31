"""Outbound URL rules of the ``remotecfg`` adapter: the shared rules, named for ``flag``."""

from __future__ import annotations

from toolkit_batteries.core.outbound import check_url as _check_url
from toolkit_batteries.core.outbound import is_public

__all__ = ["check_url", "is_public"]


def check_url(
    url: str, field: str, *, allow_insecure: bool, allow_private: bool, instance: str
) -> str:
    """Return ``url`` (no trailing ``/``) if the outbound rules allow it, else raise.

    See :func:`toolkit_batteries.core.outbound.check_url`; errors name ``flag.<instance>``
    and ``field`` and point to ``remotecfg.allow_insecure`` / ``remotecfg.allow_private``.
    """
    return _check_url(
        url,
        service="flag",
        field=field,
        instance=instance,
        allow_insecure=allow_insecure,
        allow_private=allow_private,
        insecure_option="remotecfg.allow_insecure",
        private_option="remotecfg.allow_private",
    ).rstrip("/")

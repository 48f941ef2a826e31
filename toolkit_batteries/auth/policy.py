"""Option rules shared by the adapters and the system checks (no vendor imports).

Keeping them here means ``manage.py check`` and ``services.auth()`` can never disagree
about what a valid configuration is, and the checks do not import pyjwt.

Every error is an :class:`~toolkit_batteries.core.errors.InvalidOptionsError` naming
``auth.<instance>`` and the field (``jwt.keys[1].secret``), never the value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import check_url as _check_url
from toolkit_batteries.core.outbound import host_is_public

__all__ = [
    "MAX_LEEWAY",
    "MIN_SECRET_BYTES",
    "KeyRing",
    "build_keyring",
    "check_leeway",
    "check_url",
    "development_switch",
    "host_is_public",
]

#: The environment variable of the toolkit's development switch, and its "on" values
#: (the same ones the crypto battery's development key accepts).
ENV_VARIABLE = "TOOLKIT_ENV"
DEV_ENVIRONMENTS = frozenset({"dev", "test", "development"})


def development_switch(environ: Any = None) -> bool:
    """Tell whether ``TOOLKIT_ENV`` is ``dev``, ``test`` or ``development`` (any case)."""
    import os

    env = os.environ if environ is None else environ
    return str(env.get(ENV_VARIABLE, "")).strip().lower() in DEV_ENVIRONMENTS


#: The spec's ``MinSecretLen``: HMAC secrets shorter than this fail at open.
MIN_SECRET_BYTES = 32
#: Largest clock-skew tolerance (``jwt.leeway``, ``oidc.leeway``). Skew between hosts
#: synchronised by NTP is well under a second; a larger leeway only keeps expired (or
#: not yet valid) tokens alive, so a long one is a configuration mistake, refused.
MAX_LEEWAY = timedelta(minutes=5)


def check_leeway(leeway: timedelta, field: str, instance: str = "default") -> float:
    """Return ``leeway`` in seconds once it is within 0 and :data:`MAX_LEEWAY`."""
    if leeway < timedelta(0):
        raise InvalidOptionsError("auth", field, "must not be negative", instance=instance)
    if leeway > MAX_LEEWAY:
        raise InvalidOptionsError(
            "auth", field, "must be at most 5m (clock skew, not a grace period)", instance=instance
        )
    return leeway.total_seconds()


@dataclass(frozen=True, slots=True)
class KeyRing:
    """The HMAC keys of one ``jwt`` instance; secrets stay out of ``repr``."""

    #: Key id written to new tokens' ``kid`` header; ``None`` signs with ``jwt.secret``.
    signing_kid: str | None
    signing_key: bytes = field(repr=False)
    #: Every listed key by kid (verification picks by the token's ``kid``).
    by_kid: dict[str, bytes] = field(repr=False)
    #: ``jwt.secret``: signs when ``jwt.keys`` is empty, verifies kid-less tokens.
    legacy: bytes | None = field(repr=False)

    @property
    def kids(self) -> tuple[str, ...]:
        """Return the listed key ids, in configuration order."""
        return tuple(self.by_kid)


def _secret_bytes(secret: str, name: str, instance: str) -> bytes:
    data = secret.encode("utf-8")
    if len(data) < MIN_SECRET_BYTES:
        raise InvalidOptionsError(
            "auth", name, f"must be at least {MIN_SECRET_BYTES} bytes", instance=instance
        )
    return data


def build_keyring(options: Any, instance: str = "default") -> KeyRing:
    """Validate the ``jwt.`` options and return the keys they describe.

    Rules: ``jwt.secret``, when set, is at least 32 bytes; every ``jwt.keys`` entry has
    a unique non-empty ``kid`` and a secret of at least 32 bytes; ``jwt.active_kid``
    names a listed key; at least one of ``jwt.secret`` and ``jwt.keys`` is set;
    ``jwt.leeway`` is within 0 and :data:`MAX_LEEWAY` and ``jwt.max_ttl`` is 0 or at
    least one second.
    """

    def invalid(name: str, reason: str) -> InvalidOptionsError:
        return InvalidOptionsError("auth", name, reason, instance=instance)

    secret = options.secret or ""
    legacy = _secret_bytes(secret, "jwt.secret", instance) if secret else None
    by_kid: dict[str, bytes] = {}
    for index, entry in enumerate(options.keys or ()):
        kid = entry.kid or ""
        if not kid:
            raise invalid(f"jwt.keys[{index}].kid", "is required")
        if kid in by_kid:
            raise invalid(f"jwt.keys[{index}].kid", "repeats the kid of an earlier entry")
        if not entry.secret:
            raise invalid(f"jwt.keys[{index}].secret", "is required")
        by_kid[kid] = _secret_bytes(entry.secret, f"jwt.keys[{index}].secret", instance)
    active = options.active_kid or ""
    if active and active not in by_kid:
        raise invalid("jwt.active_kid", "names no key listed in jwt.keys")
    if not by_kid and legacy is None:
        raise invalid(
            "jwt.secret",
            f"is required (at least {MIN_SECRET_BYTES} bytes) unless jwt.keys lists signing keys",
        )
    check_leeway(options.leeway, "jwt.leeway", instance)
    if options.max_ttl < timedelta(0) or timedelta(0) < options.max_ttl < timedelta(seconds=1):
        raise invalid("jwt.max_ttl", "must be 0 (no cap) or at least one second")
    if by_kid:
        kid = active or next(iter(by_kid))
        return KeyRing(kid, by_kid[kid], by_kid, legacy)
    assert legacy is not None
    return KeyRing(None, legacy, by_kid, legacy)


def check_url(url: str, name: str, *, allow_insecure: bool, instance: str = "default") -> str:
    """Return ``url`` if the ``oidc`` rules allow it, else raise ``InvalidOptionsError``.

    The shared outbound rules (:func:`toolkit_batteries.core.outbound.check_url`), with
    ``oidc.allow_insecure`` lifting both the https and the public-host rule.
    """
    return _check_url(
        url,
        service="auth",
        field=name,
        instance=instance,
        allow_insecure=allow_insecure,
        allow_private=allow_insecure,
        insecure_option="oidc.allow_insecure",
        private_option="oidc.allow_insecure",
    )

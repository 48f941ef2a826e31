"""Options of the ``auth`` service; options nest under the adapter name."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.option_kinds import opens, relation
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["AuthOptions", "JWTKey", "JWTOptions", "OIDCOptions"]


@options_class
class JWTKey:
    """One rotatable signing key of the ``jwt`` adapter; tokens carry its ``kid``."""

    kid: str = option("", doc="key id written to the token's kid header")
    secret: str = option("", secret=True, doc="HMAC secret of this key")


@options_class
class JWTOptions:
    """The ``jwt.`` block: HMAC-signed bearer tokens with key rotation."""

    secret: str = option(
        "", secret=True, doc="HMAC signing secret; also verifies kid-less legacy tokens"
    )
    keys: tuple[JWTKey, ...] = option([], doc="rotatable {kid, secret} entries")
    active_kid: str = option("", doc="signing key id within keys; empty = the first entry")
    issuer: str = option("", doc="token issuer")
    audience: str = option("", doc="intended audience")
    max_ttl: Duration = option(timedelta(0), doc="cap on token lifetimes; 0 = no cap")
    leeway: Duration = option(timedelta(0), doc="clock-skew tolerance for exp and nbf (at most 5m)")


@options_class
class OIDCOptions:
    """The ``oidc.`` block: tokens verified against an OpenID Connect issuer."""

    issuer: str = option("", doc="issuer URL")
    client_id: str = option("", doc="relying-party client id")
    timeout: Duration = option(timedelta(seconds=30), doc="operation timeout")
    allow_insecure: bool = option(
        False, doc="permit an http issuer and an issuer at a private address"
    )
    leeway: Duration = option(timedelta(0), doc="clock-skew tolerance for exp and nbf (at most 5m)")


@options_class
class AuthOptions:
    """Options of ``auth``; adapters ``jwt`` (default), ``session`` and ``oidc``.

    The ``session`` adapter has no settable options: its store is injected from code.
    """

    __checks__ = (
        relation(
            "toolkit_auth.W001",
            lambda jwt: (
                None
                if jwt.secret or jwt.keys
                else "jwt.secret is not set and jwt.keys is empty; opening auth will fail until "
                "one is provided"
            ),
            adapters=("jwt",),
            warning=True,
            hint="set AUTH__{INSTANCE}__JWT_SECRET (at least 32 random bytes) in the "
            "environment, or list jwt.keys",
        ).on("jwt"),
        opens(
            "toolkit_auth.E002",
            "toolkit_batteries.auth.policy:build_keyring",
            adapters=("jwt",),
            when=lambda options: bool(options.jwt.secret or options.jwt.keys),
            hint="see docs/batteries/auth.md, section Options",
        ).on("jwt"),
    )

    jwt: JWTOptions = option(JWTOptions(), doc="options of the jwt adapter")
    oidc: OIDCOptions = option(OIDCOptions(), doc="options of the oidc adapter")

"""The auth adapters; pyjwt costs nothing to a project that never opens ``auth``."""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(
    __name__, "jwt.JWTAuthenticator session.SessionAuthenticator oidc.OIDCAuthenticator"
)

#: The protocol's other spellings (alias -> canonical).
ALIASES: dict[str, str] = {"openid": "oidc", "openidconnect": "oidc"}

"""The auth adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so pyjwt costs nothing to a
project that never opens ``auth``.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "jwt": "toolkit_batteries.auth.adapters.jwt.JWTAuthenticator",
    "session": "toolkit_batteries.auth.adapters.session.SessionAuthenticator",
    "oidc": "toolkit_batteries.auth.adapters.oidc.OIDCAuthenticator",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {"openid": "oidc", "openidconnect": "oidc"}

"""The ``auth`` battery: issue, verify and revoke bearer tokens (who is calling).

Get the configured authenticator from the registry (``services.auth()``) or a container
(``container.auth()``); pick the adapter in settings: ``jwt`` (default, HS256 with key
rotation), ``session`` (opaque ids of the ``session`` battery, revocable everywhere at
once) or ``oidc`` (ID tokens of an OpenID Connect provider)::

    issued = services.auth().issue("user-42", roles=("member",))
    claims = services.auth().verify(issued.token)   # or InvalidTokenError / TokenExpiredError

DRF views use :class:`toolkit_batteries.auth.drf.BearerAuthentication` and
:class:`~toolkit_batteries.auth.drf.BearerRequired`; plain views
:func:`toolkit_batteries.auth.decorators.bearer_required`. Importing this package imports
no vendor SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Authenticator,
        AuthError,
        Claims,
        InvalidTokenError,
        IssuedToken,
        TokenExpiredError,
        TokenRevokedError,
        UnsupportedOperationError,
    )
    from .users import TokenUser

__all__ = [
    "AuthError",
    "Authenticator",
    "Claims",
    "InvalidTokenError",
    "IssuedToken",
    "TokenExpiredError",
    "TokenRevokedError",
    "TokenUser",
    "UnsupportedOperationError",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "AuthError": "base",
    "Authenticator": "base",
    "Claims": "base",
    "InvalidTokenError": "base",
    "IssuedToken": "base",
    "TokenExpiredError": "base",
    "TokenRevokedError": "base",
    "TokenUser": "users",
    "UnsupportedOperationError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

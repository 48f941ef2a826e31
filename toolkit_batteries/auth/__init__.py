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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "AuthError Authenticator Claims InvalidTokenError IssuedToken TokenExpiredError "
        "TokenRevokedError UnsupportedOperationError"
    ),
    users="TokenUser",
)

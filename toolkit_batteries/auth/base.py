"""The auth service: who is calling (never what they may do; that is ``permission``).

Every adapter subclasses :class:`Authenticator` and serves three operations (``issue``
checks its arguments in the base class and mints through the adapter's ``_mint``)::

    auth = services.auth()
    issued = auth.issue("user-42", roles=("member",), ttl=timedelta(hours=1))
    claims = auth.verify(issued.token)      # Claims(subject="user-42", roles=("member",), ...)
    auth.revoke(issued.token)               # later verifies raise InvalidTokenError

``verify`` raises :class:`InvalidTokenError` or :class:`TokenExpiredError` (both
:class:`AuthError`), which HTTP layers turn into one generic ``401``. The distinction is
for server-side logs and for clients of the Python API, never for the response body.

A token is a bearer secret: it never appears in a ``repr``, an error message or a log
line. :class:`IssuedToken` hides it from ``repr``; errors carry a reason, not the token.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import ToolkitError

__all__ = [
    "DEFAULT_TTL",
    "REGISTERED_CLAIMS",
    "AuthError",
    "Authenticator",
    "Claims",
    "InvalidTokenError",
    "IssuedToken",
    "TokenExpiredError",
    "TokenRevokedError",
    "UnsupportedOperationError",
]

#: Lifetime of an issued token when ``issue`` gets no ``ttl`` (the original's ``TokenTTL``);
#: ``jwt.max_ttl`` still caps it.
DEFAULT_TTL = timedelta(hours=1)

#: Claim names the adapters own; ``issue(claims=...)`` may not set them, so a caller
#: cannot stretch a lifetime past ``max_ttl`` or forge another subject through ``claims``.
REGISTERED_CLAIMS = frozenset({"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "roles"})


class AuthError(ToolkitError):
    """Base of the errors a credential check raises; HTTP layers answer ``401``."""

    code = "unauthenticated"


class InvalidTokenError(AuthError):
    """The token is malformed, forged, revoked, or not meant for this service."""

    code = "invalid_token"


class TokenExpiredError(AuthError):
    """The token was valid but its ``exp`` (plus ``jwt.leeway``) has passed."""

    code = "token_expired"


class TokenRevokedError(InvalidTokenError):
    """The token was revoked; a kind of :class:`InvalidTokenError`."""

    code = "token_revoked"


class UnsupportedOperationError(ToolkitError, NotImplementedError):
    """The adapter cannot perform this operation (``oidc`` does not issue tokens)."""

    code = "unimplemented"


@dataclass(frozen=True, slots=True)
class Claims:
    """The verified identity a token carries.

    ``extra`` holds every other claim of the token (``iat``, ``iss``, ``aud``, ``email``,
    the ``claims`` given to ``issue``...), as decoded JSON.
    """

    subject: str
    roles: tuple[str, ...] = ()
    expires_at: datetime | None = None
    token_id: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def has_roles(self, *roles: str) -> bool:
        """Tell whether the token carries every one of ``roles``."""
        return all(role in self.roles for role in roles)


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A freshly minted token; ``token`` is a secret and stays out of ``repr``."""

    token: str = field(repr=False)
    expires_at: datetime
    token_id: str

    def __str__(self) -> str:
        return f"IssuedToken(token_id={self.token_id!r}, expires_at={self.expires_at})"


class Authenticator(Service):
    """Interface of every auth adapter: mint, check and invalidate bearer tokens."""

    service_name: ClassVar[str] = "auth"

    #: Instance name the container opened this adapter as (``"default"``).
    instance: str = "default"
    #: Lifetime of a token issued without ``ttl`` (an adapter may take its store's).
    _default_ttl: timedelta = DEFAULT_TTL
    #: Set by ``close()`` in adapters that fail closed; a closed one issues nothing.
    _closed: bool = False
    #: Why an adapter that only verifies refuses :meth:`issue`; empty when it issues.
    issue_refusal: ClassVar[str] = ""

    def issue(
        self,
        subject: str,
        *,
        roles: Sequence[str] = (),
        ttl: timedelta | None = None,
        claims: Mapping[str, Any] | None = None,
    ) -> IssuedToken:
        """Mint a token for ``subject`` that lives ``ttl`` (default :data:`DEFAULT_TTL`).

        The arguments are checked here, once for every adapter
        (:func:`validate_issue_arguments`), so no adapter can accept what another refuses;
        the adapter mints in :meth:`_mint`.
        """
        where = f"auth.{self.instance}"
        if self.issue_refusal:
            raise UnsupportedOperationError(f"{where}: {self.issue_refusal}")
        if self._closed:
            raise AuthError(f"{where}: the service is closed")
        lifetime = ttl if ttl is not None else self._default_ttl
        roles, lifetime, extra = validate_issue_arguments(where, subject, roles, lifetime, claims)
        return self._mint(subject, roles, lifetime, extra)

    def _mint(
        self, subject: str, roles: tuple[str, ...], lifetime: timedelta, extra: dict[str, Any]
    ) -> IssuedToken:
        """Mint a token from checked arguments (``extra``: the caller's own claims)."""
        raise NotImplementedError

    def verify(self, token: str) -> Claims:
        """Check ``token`` and return its claims; raise :class:`AuthError` if it is refused."""
        raise NotImplementedError

    def revoke(self, token: str) -> None:
        """Invalidate ``token`` so later verifies refuse it; revoking twice is harmless."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} auth.{self.instance}>"


def validate_issue_arguments(
    service: str,
    subject: str,
    roles: Sequence[str],
    ttl: timedelta | None,
    claims: Mapping[str, Any] | None,
) -> tuple[tuple[str, ...], timedelta, dict[str, Any]]:
    """Check ``issue``'s arguments; return ``(roles, ttl, claims)`` normalised.

    Raises ``ValueError``/``TypeError`` naming the argument (and a claim's key), never a
    value: subject empty, a role not a non-empty string, ``ttl`` under one second
    (lifetimes are whole seconds on the wire), or a claim that is registered.
    """
    if not isinstance(subject, str) or not subject:
        raise ValueError(f"{service}: issue needs a non-empty subject string")
    if isinstance(roles, str):
        raise TypeError(f"{service}: roles must be a sequence of strings, not one string")
    normalised = tuple(roles)
    if any(not isinstance(role, str) or not role for role in normalised):
        raise ValueError(f"{service}: every role must be a non-empty string")
    lifetime = DEFAULT_TTL if ttl is None else ttl
    if not isinstance(lifetime, timedelta):
        raise TypeError(f"{service}: ttl must be a datetime.timedelta")
    if lifetime < timedelta(seconds=1):
        raise ValueError(f"{service}: ttl must be at least one second")
    extra = dict(claims or {})
    for key in extra:
        if not isinstance(key, str):
            raise TypeError(f"{service}: claim names must be strings")
        if key in REGISTERED_CLAIMS:
            raise ValueError(f'{service}: claim "{key}" is set by the adapter and cannot be given')
    return normalised, lifetime, extra

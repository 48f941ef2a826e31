"""The ``session`` adapter: opaque tokens that are ids of the ``session`` battery.

A token is a session id (256 random bits) whose record holds the subject, roles, claims
and expiry. Verification is one store read; revocation deletes the record, so it takes
effect in every process that shares the store (``kvserver`` or ``db`` session adapters) at
once (spec rule 6). The spec injects the store from code; here the store is the
container's ``session`` service: the instance named like this auth instance when one is
configured, else ``session.default``. Code may also build
``SessionAuthenticator(store)`` around any object with the session API.

The record names the auth instance that issued it, and every other instance refuses the
token (issue 29): ``auth.admin`` over the same store never accepts a token of
``auth.default``. The session store is scoped by instance too.

Opening fails when that store cannot be opened or does not hand back what it stored
(spec rule 8: "without it the service fails at startup"), and fails closed when the store
is not shared: over a ``memory`` session store a token would verify, and a revocation
hold, in one process only. Only the development switch (``TOOLKIT_ENV`` set to ``dev``,
``test`` or ``development``) lets a single-process development server use it.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Self

from toolkit_batteries.auth.base import (
    DEFAULT_TTL,
    Authenticator,
    AuthError,
    Claims,
    InvalidTokenError,
    IssuedToken,
    TokenExpiredError,
)
from toolkit_batteries.auth.policy import development_switch
from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import (
    ConfigurationError,
    ServiceUnavailableError,
    ToolkitError,
)

__all__ = ["KIND", "SessionAuthenticator"]

logger = logging.getLogger("toolkit.auth")

#: The ``kind`` of a session record that is an auth token; other records never verify.
KIND = "toolkit.auth.token"

#: The shape of a session id (the session battery issues 43 URL-safe characters).
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{16,128}")


class SessionAuthenticator(Authenticator):
    """Opaque bearer tokens stored as sessions; revocation is immediate everywhere."""

    adapter_name = "session"

    def __init__(
        self,
        store: Any,
        *,
        instance: str = "default",
        default_ttl: timedelta | None = None,
        clock: Any = time.time,
    ) -> None:
        """Wrap ``store`` (the session API: ``create``, ``get``, ``delete``)."""
        for method in ("create", "get", "delete"):
            if not callable(getattr(store, method, None)):
                raise ConfigurationError(
                    f"auth.{instance}: the session adapter needs a session store with {method}()"
                )
        self.instance = instance
        self.store = store
        self._default_ttl = default_ttl or DEFAULT_TTL
        self._clock = clock
        self._where = f"auth.{instance}"

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Open over the container's session store, probing that it works."""
        name = ctx.sibling_name("session")
        where = f"auth.{ctx.instance}"
        try:
            store = ctx.container.session(name)
        except ConfigurationError as exc:
            raise ConfigurationError(
                f"{where}: the session adapter needs a usable session store "
                f"(session.{name} does not open: {exc})"
            ) from exc
        except ToolkitError as exc:
            raise ServiceUnavailableError(
                "auth", f"the session store session.{name} does not open", instance=ctx.instance
            ) from exc
        if getattr(store, "adapter_name", "") == "memory" and not development_switch():
            raise ConfigurationError(
                f"{where}: the session adapter needs a shared session store, and session."
                f"{name} uses the memory adapter (tokens would verify and be revoked in one "
                f"process only); set SESSION__{name.upper()}__ADAPTER to kvserver or db, or "
                "TOOLKIT_ENV=development for a single-process development server"
            )
        authenticator = cls(store, instance=ctx.instance, default_ttl=getattr(store, "ttl", None))
        authenticator.probe()
        return authenticator

    def probe(self) -> None:
        """Store, read back and delete one short record; raise if the store cannot."""
        try:
            probe_id = self.store.create({"kind": "toolkit.auth.probe"}, ttl=timedelta(seconds=30))
            data = self.store.get(probe_id)
            self.store.delete(probe_id)
        except ConfigurationError:
            raise
        except ToolkitError as exc:
            raise ServiceUnavailableError(
                "auth", "the session store is unavailable", instance=self.instance
            ) from exc
        except Exception as exc:
            raise ServiceUnavailableError(
                "auth", f"the session store failed ({type(exc).__name__})", instance=self.instance
            ) from None
        if not isinstance(data, dict) or data.get("kind") != "toolkit.auth.probe":
            raise ConfigurationError(
                f"{self._where}: the session store does not return the data it stores"
            )

    # ------------------------------------------------------------------ operations

    def _mint(
        self, subject: str, roles: tuple[str, ...], lifetime: timedelta, extra: dict[str, Any]
    ) -> IssuedToken:
        """Create a session for ``subject``; its id is the token (default ttl: the store's)."""
        now = self._clock()
        expires = now + lifetime.total_seconds()
        token_id = secrets.token_hex(16)
        record = {
            "kind": KIND,
            # The issuing instance: another auth instance sharing this store refuses it.
            "auth": self.instance,
            "sub": subject,
            "roles": list(roles),
            "jti": token_id,
            "iat": int(now),
            "exp": expires,
            "claims": extra,
        }
        try:
            token = self.store.create(record, ttl=lifetime)
        except TypeError:
            raise TypeError(f"{self._where}: claims must be JSON-serialisable") from None
        except ToolkitError:
            raise
        except Exception as exc:
            raise self._unavailable(exc) from None
        return IssuedToken(token, datetime.fromtimestamp(expires, UTC), token_id)

    def verify(self, token: str) -> Claims:
        """Return the claims of a live token session; raise ``InvalidTokenError`` otherwise."""
        try:
            record = self._record(token)
            if record is None:
                raise InvalidTokenError("unknown or expired session")
            expires = record.get("exp")
            if isinstance(expires, bool) or not isinstance(expires, int | float):
                raise InvalidTokenError("malformed session")
            if expires <= self._clock():
                raise TokenExpiredError("token expired")
            subject, roles = record.get("sub"), record.get("roles", [])
            if not isinstance(subject, str) or not subject:
                raise InvalidTokenError("missing subject")
            if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
                raise InvalidTokenError("malformed session")
            extra = dict(record.get("claims") or {})
            extra["iat"] = record.get("iat")
            return Claims(
                subject=subject,
                roles=tuple(roles),
                expires_at=datetime.fromtimestamp(expires, UTC),
                token_id=str(record.get("jti", "")),
                extra=extra,
            )
        except AuthError as exc:
            logger.debug("%s: token refused: %s", self._where, exc)
            raise

    def revoke(self, token: str) -> None:
        """Delete the token's session; every process sharing the store refuses it at once.

        Revoking a token that is gone already is harmless; a malformed token, or the id of
        a session that is not an auth token, raises ``InvalidTokenError``.
        """
        if self._record(token) is None:
            return
        try:
            self.store.delete(token)
        except Exception as exc:
            raise self._unavailable(exc) from None
        logger.info("%s: token revoked", self._where)

    def _record(self, token: Any) -> dict[str, Any] | None:
        """Return the token's session record, ``None`` when gone; refuse foreign records."""
        if not isinstance(token, str) or _SESSION_ID.fullmatch(token) is None:
            raise InvalidTokenError("malformed token")
        try:
            record = self.store.get(token)
        except Exception as exc:
            raise self._unavailable(exc) from None
        if record is None:
            return None
        if not isinstance(record, dict) or record.get("kind") != KIND:
            raise InvalidTokenError("not an auth token")
        if record.get("auth") != self.instance:
            # Issued by another auth instance over a shared session store (or before the
            # issuer was recorded): refused, as the jwt adapter refuses another's tokens.
            raise InvalidTokenError("token of another auth instance")
        return record

    def _unavailable(self, exc: Exception) -> ServiceUnavailableError:
        logger.warning("%s: the session store failed (%s)", self._where, type(exc).__name__)
        return ServiceUnavailableError("auth", "the session store failed", instance=self.instance)

    def __repr__(self) -> str:
        return f"<SessionAuthenticator auth.{self.instance} store={type(self.store).__name__}>"

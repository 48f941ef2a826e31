"""The ``jwt`` adapter (default): HS256 bearer tokens with key rotation and revocation.

Rules (spec, "Rules for the jwt adapter"), each enforced here:

1. Secrets are at least 32 bytes; opening with a shorter one (or none) fails.
2. HS256 only: the header's ``alg`` must be exactly ``HS256`` before any key is chosen,
   and pyjwt is told the same (``algorithms=["HS256"]``), so ``none``, HS384/HS512 and
   every asymmetric algorithm are refused.
3. ``exp`` is required; a future ``nbf`` is refused; both honour ``jwt.leeway``.
4. With ``jwt.keys``, new tokens carry ``kid`` and are signed with ``jwt.active_kid`` (the
   first entry when empty); verification picks the key by ``kid``; kid-less tokens are
   verified with ``jwt.secret``; an unknown ``kid`` fails closed.
6. Revoked ``jti`` values live in a per-process memory store unless a shared store is
   given (:mod:`toolkit_batteries.auth.revocation`).

Beyond the spec, as the original does: ``sub`` and ``jti`` are required; a token carrying
``iss`` or ``aud`` that this instance does not configure is refused (no cross-tenant
reuse of a shared secret); ``jwt.max_ttl`` caps lifetimes on issue and refuses tokens
that claim a longer one.
"""

from __future__ import annotations

import copy
import json
import logging
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Self

from toolkit_batteries.auth import tokens
from toolkit_batteries.auth.base import (
    Authenticator,
    AuthError,
    Claims,
    InvalidTokenError,
    IssuedToken,
    TokenRevokedError,
)
from toolkit_batteries.auth.options import JWTOptions
from toolkit_batteries.auth.policy import build_keyring
from toolkit_batteries.auth.revocation import (
    MemoryRevocationStore,
    RevocationStore,
    store_from_settings,
    valid_token_id,
)
from toolkit_batteries.auth.tokens import build_claims, check_audience, check_times, read_header
from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError, ServiceUnavailableError

with MissingExtraError.guard("auth", "jwt", "auth", "pyjwt"):
    import jwt as pyjwt

__all__ = ["ALGORITHM", "JWTAuthenticator"]

logger = logging.getLogger("toolkit.auth")

#: The only signing algorithm (spec rule 2).
ALGORITHM = "HS256"


class JWTAuthenticator(Authenticator):
    """HS256 tokens signed with ``jwt.secret`` or the active ``jwt.keys`` entry."""

    adapter_name = "jwt"

    def __init__(
        self,
        options: JWTOptions,
        *,
        instance: str = "default",
        revocation: RevocationStore | None = None,
        clock: Any = time.time,
    ) -> None:
        """Validate ``options`` (raising ``InvalidOptionsError``) and prepare the keys."""
        self.instance = instance
        self._ring = build_keyring(options, instance)
        self._issuer = options.issuer or ""
        self._audience = options.audience or ""
        self._max_ttl = options.max_ttl
        self._max_ttl_s = options.max_ttl.total_seconds()
        self._leeway = options.leeway.total_seconds()
        self._clock = clock
        self._revocation: Any = revocation if revocation is not None else MemoryRevocationStore()
        # pyjwt's JWS layer checks the signature; the claim rules are ours (tokens.py), so
        # its JWT layer (which would judge the claims a second time) is skipped.
        self._jws = pyjwt.PyJWS()
        self._closed = False
        self._where = f"auth.{instance}"

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Open from settings; ``TOOLKIT_AUTH_REVOCATION`` may pick a shared store."""
        authenticator = cls(ctx.options.jwt, instance=ctx.instance)
        store = store_from_settings(ctx)
        if store is not None:
            authenticator._revocation = store
        return authenticator

    def with_revocation_store(self, store: RevocationStore) -> Self:
        """Return a copy of this authenticator that records revocations in ``store``."""
        if not isinstance(store, RevocationStore):
            raise TypeError("the store needs revoke(token_id, until) and is_revoked(token_id)")
        clone = copy.copy(self)
        clone._revocation = store
        return clone

    @property
    def revocation_store(self) -> Any:
        """Return the store revoked token ids are kept in."""
        return self._revocation

    @property
    def signing_kid(self) -> str | None:
        """Return the ``kid`` new tokens carry (``None`` when signed with ``jwt.secret``)."""
        return self._ring.signing_kid

    # ------------------------------------------------------------------ issue

    def _mint(
        self, subject: str, roles: tuple[str, ...], lifetime: timedelta, extra: dict[str, Any]
    ) -> IssuedToken:
        """Mint an HS256 token; ``ttl`` (default 1 h) is capped by ``jwt.max_ttl``."""
        if self._max_ttl and lifetime > self._max_ttl:
            lifetime = self._max_ttl
        now = int(self._clock())
        expires = now + max(1, int(lifetime.total_seconds()))
        token_id = secrets.token_hex(16)
        payload: dict[str, Any] = {**extra, "sub": subject, "iat": now, "exp": expires}
        payload["jti"] = token_id
        if roles:
            payload["roles"] = list(roles)
        if self._issuer:
            payload["iss"] = self._issuer
        if self._audience:
            payload["aud"] = self._audience
        ring = self._ring
        headers = {"kid": ring.signing_kid} if ring.signing_kid is not None else None
        try:
            body = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError):
            raise TypeError(f"{self._where}: claims must be JSON-serialisable") from None
        token = self._jws.encode(body, ring.signing_key, algorithm=ALGORITHM, headers=headers)
        return IssuedToken(token, datetime.fromtimestamp(expires, UTC), token_id)

    # ------------------------------------------------------------------ verify

    def verify(self, token: str) -> Claims:
        """Check signature, header and claims; raise ``InvalidTokenError``/``TokenExpiredError``."""
        try:
            payload = self._decode(token)
            now = self._clock()
            exp = check_times(payload, now, self._leeway)
            self._check_claims(payload, exp, now)
            token_id = payload.get("jti")
            if not valid_token_id(token_id):
                raise InvalidTokenError("missing or malformed jti")
            if self._is_revoked(token_id):
                raise TokenRevokedError("token revoked")
            return build_claims(payload, exp, token_id)
        except AuthError as exc:
            logger.debug("%s: token refused: %s", self._where, exc)
            raise

    def _decode(self, token: Any) -> dict[str, Any]:
        """Return the payload of a token whose header passes and whose signature matches."""
        if self._closed:
            raise InvalidTokenError("the service is closed")
        header = read_header(token)
        if header.get("alg") != ALGORITHM:
            raise InvalidTokenError("algorithm not allowed")
        ring = self._ring
        if "kid" in header:
            kid = header["kid"]
            key = ring.by_kid.get(kid) if isinstance(kid, str) else None
            if key is None:
                raise InvalidTokenError("unknown kid")
        else:
            key = ring.legacy
            if key is None:
                raise InvalidTokenError("kid-less token and no jwt.secret")
        return tokens.decode_payload(self._jws, token, key, ALGORITHM)

    def _check_claims(self, payload: dict[str, Any], exp: float, now: float) -> None:
        if self._issuer:
            if payload.get("iss") != self._issuer:
                raise InvalidTokenError("wrong issuer")
        elif "iss" in payload:
            raise InvalidTokenError("unexpected issuer")
        if self._audience:
            check_audience(payload, self._audience)
        elif "aud" in payload:
            raise InvalidTokenError("unexpected audience")
        if self._max_ttl_s:
            issued = payload.get("iat")
            if exp - now > self._max_ttl_s + self._leeway or (
                issued is not None and exp - issued > self._max_ttl_s
            ):
                raise InvalidTokenError("lifetime over jwt.max_ttl")

    def _is_revoked(self, token_id: str) -> bool:
        try:
            return self._revocation.is_revoked(token_id)
        except Exception as exc:  # a store outage must fail closed, not pass the token
            logger.warning(
                "%s: the revocation store failed (%s); refusing to vouch for the token",
                self._where,
                type(exc).__name__,
            )
            raise ServiceUnavailableError(
                "auth", "the revocation store failed", instance=self.instance
            ) from None

    # ------------------------------------------------------------------ revoke

    def revoke(self, token: str) -> None:
        """Record the token's ``jti`` until it would expire (plus ``jwt.leeway``).

        The signature must match (so nobody can fill the store with forged ids), the time
        claims are not judged (a token not valid yet can be revoked), and a token that has
        already expired needs nothing. Raises ``InvalidTokenError`` for a token this
        instance would never accept or that has no ``jti``.
        """
        try:
            payload = self._decode(token)
            token_id = payload.get("jti")
            if not valid_token_id(token_id):
                raise InvalidTokenError("token has no jti; it cannot be revoked")
            exp = tokens.expiry_of(payload)
        except AuthError as exc:
            logger.debug("%s: revoke refused: %s", self._where, exc)
            raise
        until = exp + self._leeway
        if until <= self._clock():
            return
        try:
            self._revocation.revoke(token_id, until)
        except Exception as exc:
            logger.warning("%s: the revocation store failed (%s)", self._where, type(exc).__name__)
            raise ServiceUnavailableError(
                "auth", "the revocation store failed", instance=self.instance
            ) from None
        logger.info("%s: token revoked (token_id=%s)", self._where, token_id)

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Fail closed from now on: later verifies and revokes raise ``InvalidTokenError``."""
        self._closed = True

    def __repr__(self) -> str:
        kids = ",".join(self._ring.kids) or "-"
        active = self._ring.signing_kid or "jwt.secret"
        store = type(self._revocation).__name__
        return f"<JWTAuthenticator auth.{self.instance} kids={kids} signing={active} {store}>"

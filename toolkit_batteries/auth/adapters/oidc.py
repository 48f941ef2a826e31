"""The ``oidc`` adapter: verify ID tokens of an OpenID Connect provider.

Opening runs discovery (``<issuer>/.well-known/openid-configuration``) and fetches the
provider's JWKS, both within ``oidc.timeout``; a provider that cannot be reached fails the
open with ``ServiceUnavailableError``. Verification is then local: the token's ``kid``
picks a JWKS key (an unknown ``kid`` refetches the JWKS, at most once per
:data:`REFRESH_INTERVAL` seconds, then fails closed; a ``kid`` that is not a string is a
malformed token), RS256 and ES256 only, ``iss`` must be the provider's issuer, ``aud``
must contain ``oidc.client_id``, ``exp`` is required and a future ``nbf`` is refused, both
within ``oidc.leeway`` (clock skew, at most 5 minutes).

The refetch is single-flight and holds no lock while it waits on the provider: the one
verification that starts it waits (up to ``oidc.timeout``); every other verification
carries on with the keys already held, and an unknown ``kid`` met meanwhile is refused at
once instead of queueing behind the fetch.

Fetches go through a guarded client: https with a TLS 1.2 floor, no redirects, no
environment proxies, at most 1 MiB per document, and every address the host resolves to
must be public. ``oidc.allow_insecure`` lifts the last rule and allows http (a provider on
a private network or a test provider on 127.0.0.1). The ``jwks_uri`` the discovery
document names passes the same rules.

``issue`` raises :class:`UnsupportedOperationError` (the provider issues tokens);
``revoke`` records the token id in this process only.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any, Self

from toolkit_batteries.auth import tokens
from toolkit_batteries.auth.base import (
    Authenticator,
    AuthError,
    Claims,
    InvalidTokenError,
    TokenRevokedError,
)
from toolkit_batteries.auth.options import OIDCOptions
from toolkit_batteries.auth.policy import check_leeway, check_url
from toolkit_batteries.auth.revocation import MemoryRevocationStore
from toolkit_batteries.auth.tokens import build_claims, check_audience, check_times, read_header
from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import OutboundBlockedError, connector
from toolkit_batteries.core.outbound.urllib_opener import guarded_opener
from toolkit_batteries.core.tracing import traced

with MissingExtraError.guard("auth", "oidc", "auth", "pyjwt"):
    import jwt as pyjwt

__all__ = ["ALGORITHMS", "MAX_DOCUMENT_BYTES", "REFRESH_INTERVAL", "OIDCAuthenticator"]

logger = logging.getLogger("toolkit.auth")

#: Signing algorithms accepted on ID tokens.
ALGORITHMS = ("RS256", "ES256")
#: Largest discovery document or JWKS read.
MAX_DOCUMENT_BYTES = 1_048_576
#: Fewest seconds between two JWKS fetches triggered by unknown key ids.
REFRESH_INTERVAL = 30.0


#: Kept for callers of the former private names: the shared guard (core.outbound).
_Blocked = OutboundBlockedError


def _guarded_connector(allow_private: bool) -> Any:
    """Return a ``socket.create_connection`` that refuses non-public addresses."""
    return connector(allow_private=allow_private)


@traced("_fetch_json")
class OIDCAuthenticator(Authenticator):
    """Verify ID tokens signed by the provider at ``oidc.issuer`` for ``oidc.client_id``."""

    adapter_name = "oidc"
    #: The identity provider issues ID tokens, never this service.
    issue_refusal = "the oidc adapter cannot issue tokens; the identity provider does"

    def __init__(
        self, options: OIDCOptions, *, instance: str = "default", clock: Any = time.time
    ) -> None:
        """Validate the options, run discovery and fetch the JWKS."""
        self.instance = instance
        self._where = f"auth.{instance}"
        allow = bool(options.allow_insecure)
        self._issuer = check_url(
            options.issuer, "oidc.issuer", allow_insecure=allow, instance=instance
        )
        if not options.client_id:
            raise InvalidOptionsError("auth", "oidc.client_id", "is required", instance=instance)
        self._client_id = options.client_id
        self._allow_insecure = allow
        self._timeout = (options.timeout or timedelta(seconds=30)).total_seconds()
        if self._timeout <= 0:
            raise InvalidOptionsError("auth", "oidc.timeout", "must be positive", instance=instance)
        self._leeway = check_leeway(options.leeway, "oidc.leeway", instance)
        self._clock = clock
        self._opener = guarded_opener(allow_insecure=allow, allow_private=allow)
        #: Guards the refresh bookkeeping only; never held while fetching.
        self._lock = threading.Lock()
        self._refreshing = False
        self._revoked = MemoryRevocationStore(clock=clock)
        self._jws = pyjwt.PyJWS()  # signature only; the claim rules are in tokens.py
        metadata = self._fetch_json(self._issuer.rstrip("/") + "/.well-known/openid-configuration")
        issuer = metadata.get("issuer")
        if not isinstance(issuer, str) or issuer.rstrip("/") != self._issuer.rstrip("/"):
            raise ServiceUnavailableError(
                "auth", "the discovery document names another issuer", instance=instance
            )
        self._token_issuer = issuer
        jwks_uri = metadata.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise ServiceUnavailableError(
                "auth", "the discovery document has no jwks_uri", instance=instance
            )
        try:
            self._jwks_uri = check_url(
                jwks_uri, "oidc.issuer", allow_insecure=allow, instance=instance
            )
        except InvalidOptionsError:
            raise ServiceUnavailableError(
                "auth", "the provider's jwks_uri breaks the oidc URL rules", instance=instance
            ) from None
        self.metadata: dict[str, Any] = metadata
        self._keys: dict[str | None, Any] = {}
        self._fetched_at = 0.0
        self._refresh_keys()

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Open from the ``oidc.`` options (discovery and JWKS fetched now)."""
        return cls(ctx.options.oidc, instance=ctx.instance)

    # ------------------------------------------------------------------ fetching

    def _fetch_json(self, url: str) -> dict[str, Any]:
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        try:
            with self._opener.open(request, timeout=self._timeout) as response:
                body = response.read(MAX_DOCUMENT_BYTES + 1)
        except OutboundBlockedError:
            raise InvalidOptionsError(
                "auth",
                "oidc.issuer",
                "leads to a non-public address or to http (needs oidc.allow_insecure)",
                instance=self.instance,
            ) from None
        except urllib.error.HTTPError as exc:
            raise ServiceUnavailableError(
                "auth", f"the provider answered HTTP {exc.code}", instance=self.instance
            ) from None
        except (OSError, http.client.HTTPException) as exc:
            raise ServiceUnavailableError(
                "auth",
                f"the provider is unreachable ({type(exc).__name__})",
                instance=self.instance,
            ) from None
        if len(body) > MAX_DOCUMENT_BYTES:
            raise ServiceUnavailableError(
                "auth", "the provider sent a document over 1 MiB", instance=self.instance
            )
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        if not isinstance(document, dict):
            raise ServiceUnavailableError(
                "auth",
                "the provider sent a document that is not a JSON object",
                instance=self.instance,
            )
        return document

    def _refresh_keys(self) -> None:
        """Fetch the JWKS and keep the usable signing keys by ``kid``."""
        document = self._fetch_json(self._jwks_uri)
        keys: dict[str | None, Any] = {}
        for entry in document.get("keys") or ():
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = pyjwt.PyJWK(entry)
            except (pyjwt.PyJWKError, pyjwt.InvalidKeyError, ValueError, TypeError):
                continue  # unknown key type or algorithm: not one we verify with
            if key.algorithm_name not in ALGORITHMS:
                continue
            keys[entry.get("kid") if isinstance(entry.get("kid"), str) else None] = key
        self._keys = keys
        self._fetched_at = self._clock()

    def _key_for(self, kid: Any, alg: str) -> Any:
        """Return the JWKS key for ``kid`` (refetching once if unknown), else refuse."""
        if kid is not None and not isinstance(kid, str):
            raise InvalidTokenError("malformed kid")  # a dict or list: never a key id
        keys = self._keys
        key = keys.get(kid)
        if key is None and kid is None:
            candidates = [k for k in keys.values() if k.algorithm_name == alg]
            key = candidates[0] if len(candidates) == 1 else None
        if key is None and kid is not None and self._start_refresh():
            self._refresh_outside_lock()
            key = self._keys.get(kid)
        if key is None:
            raise InvalidTokenError("unknown kid")
        if key.algorithm_name != alg:
            raise InvalidTokenError("algorithm does not match the key")
        return key

    def _start_refresh(self) -> bool:
        """Claim the one refetch allowed now; False while one runs or too soon after one."""
        with self._lock:
            if self._refreshing or self._clock() - self._fetched_at < REFRESH_INTERVAL:
                return False
            self._refreshing = True
            self._fetched_at = self._clock()  # failures are rate-limited too
            return True

    def _refresh_outside_lock(self) -> None:
        """Fetch the JWKS with no lock held; swap the keys in when it succeeds."""
        try:
            self._refresh_keys()
        except (ServiceUnavailableError, InvalidOptionsError) as exc:
            logger.warning("%s: JWKS refresh failed: %s", self._where, exc)
        finally:
            with self._lock:
                self._refreshing = False

    # ------------------------------------------------------------------ operations

    def verify(self, token: str) -> Claims:
        """Check an ID token's signature against the JWKS and its claims."""
        try:
            payload = self._decode(token)
            now = self._clock()
            exp = check_times(payload, now, self._leeway)
            if payload.get("iss") != self._token_issuer:
                raise InvalidTokenError("wrong issuer")
            check_audience(payload, self._client_id)
            aud, azp = payload.get("aud"), payload.get("azp")
            if isinstance(aud, list) and len(aud) > 1 and azp not in (None, self._client_id):
                raise InvalidTokenError("wrong authorized party")
            token_id = self._token_id(token, payload)
            if self._revoked.is_revoked(token_id):
                raise TokenRevokedError("token revoked")
            return build_claims(payload, exp, token_id)
        except AuthError as exc:
            logger.debug("%s: token refused: %s", self._where, exc)
            raise

    def revoke(self, token: str) -> None:
        """Refuse the token in this process until it expires (the provider is not told)."""
        try:
            payload = self._decode(token)
        except AuthError as exc:
            logger.debug("%s: revoke refused: %s", self._where, exc)
            raise
        until = tokens.expiry_of(payload) + self._leeway
        if until > self._clock():
            self._revoked.revoke(self._token_id(token, payload), until)
        logger.info("%s: token revoked in this process", self._where)

    def _decode(self, token: Any) -> dict[str, Any]:
        header = read_header(token)
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            raise InvalidTokenError("algorithm not allowed")
        key = self._key_for(header.get("kid"), alg)
        return tokens.decode_payload(self._jws, token, key, alg)

    @staticmethod
    def _token_id(token: str, payload: dict[str, Any]) -> str:
        """Return ``jti``, or a digest of the token when the provider sets none."""
        jti = payload.get("jti")
        if isinstance(jti, str) and 0 < len(jti) <= 128:
            return jti
        return "sha256:" + hashlib.sha256(token.encode()).hexdigest()[:32]

    def __repr__(self) -> str:
        return f"<OIDCAuthenticator auth.{self.instance} keys={len(self._keys)}>"

"""Service-account credentials: the OAuth 2.0 JWT-bearer grant (RFC 7523) of a provider's
key file, shared by the batteries that call APIs authorised this way (the remote
configuration service of ``flag``, the push service of ``notification``).

A key file is JSON with ``client_email``, ``private_key`` and optionally
``private_key_id``, ``project_id`` and ``token_uri``. :class:`ServiceAccount` reads it
(errors name the battery's option, never a value; the repr shows nothing), signs the
RS256 assertion, and reads the token endpoint's answer; :class:`TokenCache` keeps the
access token until shortly before it expires. Each battery posts the assertion through
its own guarded client and maps failures to its own errors. PyJWT is imported when an
assertion is signed, not with this module.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolkit_batteries.core.errors import InvalidOptionsError

__all__ = ["DEFAULT_TOKEN_URI", "GRANT_TYPE", "ServiceAccount", "TokenCache", "read_token"]

#: Where a key file without ``token_uri`` exchanges its assertion.
DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"
#: The grant type of the token request's form body.
GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: Lifetime of a signed assertion, in seconds (the most token endpoints accept).
ASSERTION_SECONDS = 3600
#: Seconds before a token's expiry at which it is treated as expired.
EXPIRY_MARGIN = 60.0


class ServiceAccount:
    """The parts of a service-account key file the token exchange needs (never shown)."""

    __slots__ = ("_where", "email", "key", "key_id", "project_id", "token_uri")

    def __init__(self, path: str, *, service: str, field: str, instance: str) -> None:
        def invalid(reason: str) -> InvalidOptionsError:
            return InvalidOptionsError(service, field, reason, instance=instance)

        if not path:
            raise invalid("is required (the path of a service-account JSON key file)")
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError:
            raise invalid("names a file that does not exist or cannot be read") from None
        except ValueError:
            raise invalid("names a file that is not JSON") from None
        if not isinstance(data, dict):
            raise invalid("names a file that is not a service-account key")
        for key in ("client_email", "private_key"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise invalid(f'names a key file without "{key}"')
        self.email: str = data["client_email"]
        self.key: str = data["private_key"]
        self.key_id: str = str(data.get("private_key_id") or "")
        self.project_id: str = str(data.get("project_id") or "")
        self.token_uri: str = str(data.get("token_uri") or DEFAULT_TOKEN_URI)
        self._where = (service, instance)

    def __repr__(self) -> str:
        return "<service account>"

    def project(self, configured: str, *, field: str) -> str:
        """Return the project id: ``configured``, else the key file's; raise naming ``field``.

        Every battery that calls such an API needs the same choice and the same error.
        """
        found = (configured or self.project_id).strip()
        if not found:
            service, instance = self._where
            raise InvalidOptionsError(
                service,
                field,
                "is required (or a project_id in the service-account file)",
                instance=instance,
            )
        return found

    def assertion(self, scope: str, now: float) -> str:
        """Return the signed RS256 assertion for ``scope`` (``aud`` the token URI)."""
        import jwt as pyjwt

        claims = {
            "iss": self.email,
            "scope": scope,
            "aud": self.token_uri,
            "iat": int(now),
            "exp": int(now) + ASSERTION_SECONDS,
        }
        headers = {"kid": self.key_id} if self.key_id else None
        return pyjwt.encode(claims, self.key, algorithm="RS256", headers=headers)

    def token_request(self, scope: str, now: float) -> dict[str, str]:
        """Return the form body of the token request."""
        return {"grant_type": GRANT_TYPE, "assertion": self.assertion(scope, now)}


def read_token(answer: Any, now: float) -> tuple[str, float] | None:
    """Return ``(access_token, reuse_until)`` from the token endpoint's JSON answer, or
    ``None`` when it carries no token. ``reuse_until`` is :data:`EXPIRY_MARGIN` seconds
    before the token expires (``expires_in``, default an hour)."""
    token = answer.get("access_token") if isinstance(answer, dict) else None
    if not isinstance(token, str) or not token:
        return None
    lifetime = answer.get("expires_in", 3600)
    lifetime = float(lifetime) if isinstance(lifetime, int | float) else 3600.0
    return token, now + max(lifetime - EXPIRY_MARGIN, 0.0)


class TokenCache:
    """The access token of one service account and scope, reused until near its expiry.

    Every battery calling such an API needs the same reuse, the same double-checked
    exchange (threads that find no token wait for one exchange rather than each posting
    an assertion) and the same "drop it after a 401"; only the post and the errors are
    the battery's. The token never appears in a repr.
    """

    __slots__ = ("_lock", "_token", "_until", "account", "scope")

    def __init__(self, account: ServiceAccount, scope: str) -> None:
        self.account = account
        self.scope = scope
        self._token = ""
        self._until = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "<access token>"

    def get(
        self,
        exchange: Callable[[str, dict[str, str]], Any],
        missing: Callable[[], Exception],
        clock: Callable[[], float] = time.time,
    ) -> str:
        """Return a live token, exchanging an assertion for one when there is none.

        ``exchange(token_uri, form)`` posts the form through the battery's guarded client
        and returns the decoded JSON answer, raising the battery's error when the exchange
        fails; an answer without a token raises ``missing()``. ``clock`` is read at each
        call (wall-clock seconds: the assertion's ``iat``).
        """
        if self._token and clock() < self._until:
            return self._token
        with self._lock:
            now = clock()
            if self._token and now < self._until:
                return self._token
            account = self.account
            found = read_token(
                exchange(account.token_uri, account.token_request(self.scope, now)), now
            )
            if found is None:
                raise missing()
            self._token, self._until = found
            return self._token

    def forget(self, token: str | None = None) -> None:
        """Drop the cached token (only if it is still ``token``, when given): it was refused."""
        with self._lock:
            if token is None or self._token == token:
                self._token, self._until = "", 0.0

"""The session service: server-side sessions with an expiry, behind an opaque id.

Every adapter subclasses :class:`SessionStore` and implements five primitives on an
already-validated id and already-encoded data. The base class does everything that must
not differ between adapters:

* ids are ``secrets.token_urlsafe(32)`` (256 random bits); an id that could not have been
  issued (wrong type, too long, foreign characters) is treated as missing without
  touching the store;
* data is a JSON object, encoded once here, so every adapter accepts and returns exactly
  the same values (a tuple comes back as a list on all of them) and ``get`` always returns
  a fresh ``dict`` the caller may change;
* ``ttl`` is a positive ``timedelta``; the default is the ``ttl`` option (15 minutes).

::

    store = services.session()
    sid = store.create({"user_id": 7})           # lives for the default ttl
    store.get(sid)                               # {"user_id": 7}, or None once expired
    store.update(sid, {"user_id": 7, "cart": [1]})   # replaces the data, keeps the expiry
    store.touch(sid)                             # restarts the ttl; False if gone
    store.delete(sid)

Sessions are scoped by instance on every adapter (issue 29): ``session.admin`` never
sees a session ``session.default`` stored, even on one server or table. Django's own
sessions (``request.session``) live in the same store through :mod:`.engine`.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import time
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import ServiceUnavailableError

__all__ = [
    "CREATE_ATTEMPTS",
    "DEFAULT_TTL",
    "MAX_ID_LENGTH",
    "Clock",
    "SessionStore",
    "new_session_id",
]

#: The default session lifetime (the ``ttl`` option's default).
DEFAULT_TTL = timedelta(minutes=15)
#: Fresh ids ``create`` draws before it gives up (a collision of 256-bit ids is a fault).
CREATE_ATTEMPTS = 3
#: Longest id accepted; issued ids are 43 characters.
MAX_ID_LENGTH = 128
_ID_CHARS = re.compile(r"[A-Za-z0-9_-]+")

#: A wall clock in seconds since the epoch (``time.time``); injectable for tests.
Clock = Callable[[], float]


def new_session_id() -> str:
    """Return a fresh session id: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def valid_id(session_id: Any) -> bool:
    """Tell whether ``session_id`` has the shape of an id this service could have issued."""
    return (
        isinstance(session_id, str)
        and 0 < len(session_id) <= MAX_ID_LENGTH
        and _ID_CHARS.fullmatch(session_id) is not None
    )


def ttl_milliseconds(ttl: timedelta) -> int:
    """Return ``ttl`` in whole milliseconds (rounded up); raise for a non-positive ttl."""
    if not isinstance(ttl, timedelta):
        raise TypeError("ttl must be a datetime.timedelta")
    if ttl <= timedelta(0):
        raise ValueError("ttl must be positive")
    return max(1, math.ceil(ttl.total_seconds() * 1000))


def encode_data(data: Mapping[str, Any]) -> str:
    """Return ``data`` as compact JSON; raise ``TypeError`` for anything not JSON."""
    if not isinstance(data, Mapping):
        raise TypeError("session data must be a mapping")
    return json.dumps(dict(data), separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class SessionStore(Service):
    """Interface of the session service; see the module docstring for the contract."""

    service_name: ClassVar[str] = "session"

    def __init__(
        self,
        *,
        ttl: timedelta = DEFAULT_TTL,
        instance: str = "default",
        clock: Clock = time.time,
    ) -> None:
        ttl_milliseconds(ttl)  # validates
        #: The default lifetime of a new session.
        self.ttl = ttl
        self.instance = instance
        #: The wall clock (seconds since the epoch); tests replace it to move time.
        self.clock = clock

    # ------------------------------------------------------------------ public API

    def create(self, data: Mapping[str, Any], *, ttl: timedelta | None = None) -> str:
        """Store ``data`` under a new random id that expires after ``ttl``; return the id."""
        payload = encode_data(data)
        ttl_ms = ttl_milliseconds(self.ttl if ttl is None else ttl)
        for _ in range(CREATE_ATTEMPTS):
            session_id = new_session_id()
            if self._insert(session_id, payload, ttl_ms):
                return session_id
        # 256 random bits never collide by chance: a store that keeps answering "taken"
        # is broken (or the random source is), so fail instead of looping forever.
        raise ServiceUnavailableError(
            self.service_name,
            f"could not store a new session: {CREATE_ATTEMPTS} fresh ids were all taken",
            instance=self.instance,
        )

    def get(self, session_id: str) -> dict[str, Any] | None:
        """Return the session's data, or None when it is missing or expired."""
        if not valid_id(session_id):
            return None
        payload = self._fetch(session_id)
        return None if payload is None else json.loads(payload)

    def add(self, session_id: str, data: Mapping[str, Any], *, ttl: timedelta) -> bool:
        """Store ``data`` under ``session_id`` only if that id is free; tell whether it was.

        The caller draws the id (Django's session engine does, :mod:`.engine`); an id
        this service could not have issued is refused with ``ValueError``.
        """
        payload = encode_data(data)
        ttl_ms = ttl_milliseconds(ttl)
        if not valid_id(session_id):
            raise ValueError("session id has a shape this service cannot store")
        return self._insert(session_id, payload, ttl_ms)

    def update(
        self, session_id: str, data: Mapping[str, Any], *, ttl: timedelta | None = None
    ) -> bool:
        """Replace the session's data; return False if it is gone.

        Without ``ttl`` the expiry is kept; with one the lifetime restarts at ``ttl`` in
        the same write (what Django's ``save()`` does on every request).
        """
        payload = encode_data(data)
        ttl_ms = None if ttl is None else ttl_milliseconds(ttl)
        if not valid_id(session_id):
            return False
        if ttl_ms is None:
            return self._replace(session_id, payload)
        return self._rewrite(session_id, payload, ttl_ms)

    def exists(self, session_id: str) -> bool:
        """Tell whether ``session_id`` names a live session."""
        return valid_id(session_id) and self._fetch(session_id) is not None

    def touch(self, session_id: str, ttl: timedelta | None = None) -> bool:
        """Restart the session's lifetime (``ttl`` or the default); False if it is gone."""
        ttl_ms = ttl_milliseconds(self.ttl if ttl is None else ttl)
        if not valid_id(session_id):
            return False
        return self._extend(session_id, ttl_ms)

    def delete(self, session_id: str) -> None:
        """Remove the session; removing a missing session is not an error."""
        if valid_id(session_id):
            self._remove(session_id)

    def purge_expired(self) -> int:
        """Remove expired sessions now and return how many; stores that expire by
        themselves (the key-value server) return 0."""
        return 0

    # ------------------------------------------------------------------ primitives

    def _now_ms(self) -> int:
        """Return the injectable wall clock in milliseconds since the epoch."""
        return int(self.clock() * 1000)

    def _insert(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        """Store a new session; return False if the id is taken (the caller retries)."""
        raise NotImplementedError

    def _fetch(self, session_id: str) -> str | None:
        """Return the live session's encoded data, or None."""
        raise NotImplementedError

    def _replace(self, session_id: str, payload: str) -> bool:
        """Replace a live session's data without changing its expiry."""
        raise NotImplementedError

    def _extend(self, session_id: str, ttl_ms: int) -> bool:
        """Set a live session to expire ``ttl_ms`` from now."""
        raise NotImplementedError

    def _rewrite(self, session_id: str, payload: str, ttl_ms: int) -> bool:
        """Replace a live session's data and set it to expire ``ttl_ms`` from now."""
        raise NotImplementedError

    def _remove(self, session_id: str) -> None:
        """Delete the session if it exists."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.service_name}.{self.instance}>"

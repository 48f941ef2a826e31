"""The idempotency service: reserve a key, do the work once, commit its response.

::

    store = services.idempotency()
    reservation = store.reserve("order-7f3a", fingerprint=request_hash)
    if reservation.state is ReservationState.NEW:          # this caller owns the key
        try:
            response = place_order()
        except Exception:
            reservation.release()                          # let a retry run it again
            raise
        reservation.commit(response)                       # bytes or JSON-able data
    elif reservation.state is ReservationState.IN_PROGRESS:
        ...                                                # someone else is running it
    else:                                                  # COMPLETED
        response = reservation.response                    # replay the stored result

Reserving is atomic on every adapter: among any number of concurrent callers (threads,
processes, machines for ``kvserver`` and ``db``) exactly one gets ``NEW``. A record lives
``ttl`` (default 24 h): a reservation whose owner died stays ``IN_PROGRESS`` until then,
so pass a shorter ``ttl`` to :meth:`Idempotency.reserve` for in-flight work and let
:meth:`Idempotency.commit` restart the lifetime for the stored response.

Responses are ``bytes`` or JSON-compatible values (a ``dict`` typically) and come back
as the same kind: records are never pickled, so a shared store cannot make this process
run code.
"""

from __future__ import annotations

import enum
import json
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service

__all__ = [
    "DEFAULT_TTL",
    "Idempotency",
    "Reservation",
    "ReservationState",
    "decode_response",
    "encode_response",
]

#: Used when the ``ttl`` option is unset or not positive.
DEFAULT_TTL = 24 * 3600.0
#: Longest accepted key, in characters.
MAX_KEY_LENGTH = 255


class ReservationState(enum.StrEnum):
    """Where a key stands when :meth:`Idempotency.reserve` looks at it."""

    #: The key was free: this caller owns it and must commit or release.
    NEW = "new"
    #: Another caller owns the key and has not committed yet.
    IN_PROGRESS = "in_progress"
    #: The work is done; :attr:`Reservation.response` holds its stored response.
    COMPLETED = "completed"


def encode_response(response: Any) -> bytes:
    """Encode a response for storage: ``b"b"`` + bytes, or ``b"j"`` + JSON."""
    if isinstance(response, bytes | bytearray | memoryview):
        return b"b" + bytes(response)
    try:
        text = json.dumps(response, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        raise TypeError("an idempotent response must be bytes or JSON-serialisable") from None
    return b"j" + text.encode()


def decode_response(payload: bytes | None) -> Any:
    """Decode what :func:`encode_response` stored; ``None`` stays ``None``."""
    if payload is None:
        return None
    payload = bytes(payload)
    if payload[:1] == b"b":
        return payload[1:]
    if payload[:1] == b"j":
        return json.loads(payload[1:].decode())
    raise ValueError("not an idempotency record")


@dataclass(frozen=True)
class Reservation:
    """What :meth:`Idempotency.reserve` found or created for a key."""

    key: str
    state: ReservationState
    #: The owner token: set when ``state`` is NEW, empty otherwise.
    token: str = ""
    #: The fingerprint stored with the record (the first reserver's).
    fingerprint: str = ""
    #: The stored response when ``state`` is COMPLETED.
    response: Any = None
    store: Idempotency | None = field(default=None, repr=False, compare=False)

    @property
    def owned(self) -> bool:
        """Tell whether this caller owns the key (``state`` is NEW)."""
        return self.state is ReservationState.NEW

    def commit(self, response: Any, ttl: timedelta | float | None = None) -> bool:
        """Store ``response`` for this owned key; tell whether it was still ours."""
        if not self.owned or self.store is None:
            raise RuntimeError("only a NEW reservation can be committed")
        return self.store.commit(self.key, response, ttl=ttl, token=self.token)

    def release(self) -> bool:
        """Give up this owned key so a retry can run; tell whether it was still ours."""
        if not self.owned or self.store is None:
            raise RuntimeError("only a NEW reservation can be released")
        return self.store.release(self.key, token=self.token)


class Idempotency(Service):
    """Base of the idempotency adapters.

    Adapters implement :meth:`_reserve`, :meth:`_commit`, :meth:`_release`, :meth:`_get`
    and :meth:`_delete` on encoded responses and seconds; this class checks arguments,
    makes tokens and decodes results once for all of them.
    """

    service_name: ClassVar[str] = "idempotency"

    def __init__(self, *, ttl: float = DEFAULT_TTL, instance: str = "default") -> None:
        """Set the default record lifetime in seconds."""
        self.default_ttl = ttl if ttl > 0 else DEFAULT_TTL
        self.instance = instance

    # ------------------------------------------------------------------ API

    def reserve(
        self, key: str, ttl: timedelta | float | None = None, *, fingerprint: str = ""
    ) -> Reservation:
        """Reserve ``key`` for ``ttl`` (default: the ``ttl`` option) or report its state.

        ``fingerprint`` (say, a hash of the request) is stored with a new reservation and
        returned on later ones, so a caller can tell a retry from a different request
        that reuses the key.
        """
        self._check_key(key)
        token = secrets.token_hex(16)
        found = self._reserve(key, token, fingerprint, self._lifetime(ttl))
        if found is None:
            return Reservation(key, ReservationState.NEW, token, fingerprint, None, self)
        state, stored_fingerprint, payload = found
        return Reservation(key, state, "", stored_fingerprint, decode_response(payload), self)

    def commit(
        self,
        key: str,
        response: Any,
        *,
        ttl: timedelta | float | None = None,
        token: str | None = None,
    ) -> bool:
        """Mark ``key`` completed with ``response``, kept ``ttl`` from now.

        With ``token`` only the reservation holding it may commit. Return False when the
        key is not in progress (expired, released, or already completed).
        """
        self._check_key(key)
        return self._commit(key, encode_response(response), self._lifetime(ttl), token or "")

    def release(self, key: str, *, token: str | None = None) -> bool:
        """Drop an in-progress reservation so a retry can run; completed records stay."""
        self._check_key(key)
        return self._release(key, token or "")

    def get(self, key: str) -> Reservation | None:
        """Return the live record of ``key`` (state, fingerprint, response) or ``None``."""
        self._check_key(key)
        found = self._get(key)
        if found is None:
            return None
        state, fingerprint, payload = found
        return Reservation(key, state, "", fingerprint, decode_response(payload), self)

    def delete(self, key: str) -> bool:
        """Forget ``key`` whatever its state; tell whether a live record existed."""
        self._check_key(key)
        return self._delete(key)

    # ------------------------------------------------------------------ helpers

    def _lifetime(self, ttl: timedelta | float | None) -> float:
        if ttl is None:
            return self.default_ttl
        value = ttl.total_seconds() if isinstance(ttl, timedelta) else float(ttl)
        if value <= 0:
            raise ValueError("ttl must be positive")
        return value

    @staticmethod
    def _check_key(key: Any) -> None:
        if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
            raise ValueError(f"an idempotency key must be a string of 1 to {MAX_KEY_LENGTH} chars")

    # ------------------------------------------------------------------ primitives

    def _reserve(
        self, key: str, token: str, fingerprint: str, ttl: float
    ) -> tuple[ReservationState, str, bytes | None] | None:
        """Create an in-progress record if none is live and return ``None``; otherwise
        return the live record's ``(state, fingerprint, encoded response)``."""
        raise NotImplementedError

    def _commit(self, key: str, payload: bytes, ttl: float, token: str) -> bool:
        """Complete an in-progress record (owned by ``token`` unless it is empty)."""
        raise NotImplementedError

    def _release(self, key: str, token: str) -> bool:
        """Delete an in-progress record (owned by ``token`` unless it is empty)."""
        raise NotImplementedError

    def _get(self, key: str) -> tuple[ReservationState, str, bytes | None] | None:
        """Return the live record of ``key`` or ``None``."""
        raise NotImplementedError

    def _delete(self, key: str) -> bool:
        """Delete the record of ``key``; tell whether a live one existed."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} idempotency.{self.instance}>"

"""The payment state machine: which state may follow which.

::

    pending ──► authorized ──► succeeded ──► partially_refunded ──► refunded
       │  ╲         │   ╲          ╲_____________________________▲
       │   ╲        │    ╲
       ▼    ▼       ▼     ▼
    canceled  failed ◄─ (a declined attempt; the customer may retry)

* ``pending``: created, waiting for the customer (or the provider) to pay;
* ``authorized``: the funds are held and wait for :meth:`Payment.capture`
  (``capture=False`` at creation);
* ``succeeded``: the money is taken (captured);
* ``partially_refunded`` / ``refunded``: part or all of it went back;
* ``failed``: the last attempt was declined; a new attempt may still move it to
  ``pending``, ``authorized`` or ``succeeded``, or it is ``canceled``;
* ``canceled``: abandoned before any money moved.

``canceled`` and ``refunded`` are final. Moving to the state a payment is already in is
a no-op (a webhook delivered twice), except ``partially_refunded`` which may repeat
(another partial refund). Anything else raises :class:`IllegalTransitionError`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from .errors import IllegalTransitionError

__all__ = [
    "FINAL_STATES",
    "TRANSITIONS",
    "IllegalTransitionError",
    "PaymentState",
    "check_transition",
]


class PaymentState(enum.StrEnum):
    """Where a payment stands (stored as these strings)."""

    PENDING = "pending"
    AUTHORIZED = "authorized"
    SUCCEEDED = "succeeded"
    PARTIALLY_REFUNDED = "partially_refunded"
    REFUNDED = "refunded"
    FAILED = "failed"
    CANCELED = "canceled"


S = PaymentState

#: state -> the states it may move to (besides itself, which is a no-op).
TRANSITIONS: Mapping[PaymentState, frozenset[PaymentState]] = MappingProxyType(
    {
        S.PENDING: frozenset({S.AUTHORIZED, S.SUCCEEDED, S.FAILED, S.CANCELED}),
        S.AUTHORIZED: frozenset({S.SUCCEEDED, S.FAILED, S.CANCELED}),
        S.SUCCEEDED: frozenset({S.PARTIALLY_REFUNDED, S.REFUNDED}),
        S.PARTIALLY_REFUNDED: frozenset({S.PARTIALLY_REFUNDED, S.REFUNDED}),
        S.FAILED: frozenset({S.PENDING, S.AUTHORIZED, S.SUCCEEDED, S.CANCELED}),
        S.CANCELED: frozenset(),
        S.REFUNDED: frozenset(),
    }
)

#: States no transition leaves.
FINAL_STATES = frozenset(state for state, targets in TRANSITIONS.items() if not targets)


def check_transition(
    current: PaymentState | str,
    target: PaymentState | str,
    *,
    instance: str = "default",
    payment_id: str = "",
) -> bool:
    """Return True when ``current -> target`` changes the state, False for a no-op.

    Raise :class:`IllegalTransitionError` when the machine forbids the move.
    """
    current, target = PaymentState(current), PaymentState(target)
    if target in TRANSITIONS[current]:
        return True
    if current == target:
        return False
    raise IllegalTransitionError(instance, payment_id, current, target)

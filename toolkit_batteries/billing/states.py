"""The subscription state machine every adapter and every webhook goes through.

Statuses are the union of the two providers' (``billing_a`` speaks them as they are;
``billing_b``'s ``active``, ``trialing``, ``past_due``, ``paused`` and ``canceled`` are a
subset). A subscription moves only along :data:`TRANSITIONS`; anything else raises
:class:`IllegalTransitionError`, so a late or forged event cannot revive a canceled
subscription or send an active one back to ``incomplete``. Staying in the same status is
always allowed (providers resend events).

::

    incomplete ──> trialing ──> active <──> past_due ──> unpaid
        │             │           │  ^          │          │
        │             └──> paused <──┘          │          │
        └──> incomplete_expired     └────────> canceled <──┘  (from every live status)
"""

from __future__ import annotations

import enum

from .errors import IllegalTransitionError

__all__ = [
    "LIVE",
    "TERMINAL",
    "TRANSITIONS",
    "IllegalTransitionError",
    "SubscriptionStatus",
    "can_transition",
    "check_transition",
    "parse_status",
]


class SubscriptionStatus(enum.StrEnum):
    """Where a subscription stands."""

    #: Created, first payment not made yet (the stub without ``auto_approve``).
    INCOMPLETE = "incomplete"
    #: The first payment never came; terminal.
    INCOMPLETE_EXPIRED = "incomplete_expired"
    #: In its free trial.
    TRIALING = "trialing"
    #: Paid up.
    ACTIVE = "active"
    #: A renewal payment failed; the provider is retrying.
    PAST_DUE = "past_due"
    #: Retries exhausted; service should stop, the subscription still exists.
    UNPAID = "unpaid"
    #: Paused by the merchant or the customer.
    PAUSED = "paused"
    #: Ended; terminal.
    CANCELED = "canceled"


S = SubscriptionStatus

#: Allowed moves (the same status is always allowed besides these).
TRANSITIONS: dict[SubscriptionStatus, frozenset[SubscriptionStatus]] = {
    S.INCOMPLETE: frozenset({S.TRIALING, S.ACTIVE, S.INCOMPLETE_EXPIRED, S.CANCELED}),
    S.TRIALING: frozenset({S.ACTIVE, S.PAST_DUE, S.UNPAID, S.PAUSED, S.CANCELED}),
    S.ACTIVE: frozenset({S.PAST_DUE, S.UNPAID, S.PAUSED, S.CANCELED}),
    S.PAST_DUE: frozenset({S.ACTIVE, S.UNPAID, S.PAUSED, S.CANCELED}),
    S.UNPAID: frozenset({S.ACTIVE, S.PAST_DUE, S.CANCELED}),
    S.PAUSED: frozenset({S.ACTIVE, S.TRIALING, S.CANCELED}),
    S.INCOMPLETE_EXPIRED: frozenset(),
    S.CANCELED: frozenset(),
}
#: Statuses nothing leaves.
TERMINAL = frozenset(status for status, targets in TRANSITIONS.items() if not targets)
#: Statuses in which the customer is entitled to the product.
LIVE = frozenset({S.TRIALING, S.ACTIVE, S.PAST_DUE})


def parse_status(value: str, *, instance: str = "default") -> SubscriptionStatus:
    """Return the status named ``value``; an unknown name raises ``ValueError``."""
    try:
        return SubscriptionStatus(str(value).strip().lower())
    except ValueError:
        raise ValueError(f"billing.{instance}: unknown subscription status") from None


def can_transition(current: SubscriptionStatus, target: SubscriptionStatus) -> bool:
    """Tell whether a subscription in ``current`` may move to ``target``."""
    return current == target or target in TRANSITIONS[current]


def check_transition(
    current: SubscriptionStatus, target: SubscriptionStatus, *, instance: str = "default"
) -> None:
    """Raise :class:`IllegalTransitionError` unless ``current`` may move to ``target``."""
    if not can_transition(current, target):
        raise IllegalTransitionError(instance, current.value, target.value)

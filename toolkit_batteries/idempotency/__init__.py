"""The ``idempotency`` battery: reserve-then-commit records that make retries safe.

Get the configured store from the registry (``services.idempotency()``) or a container
(``container.idempotency()``); pick ``memory`` (the default, one process), ``kvserver``
or ``db`` in settings. :mod:`.decorators` applies it to HTTP views through the
``Idempotency-Key`` header.
"""

from __future__ import annotations

from .base import Idempotency, Reservation, ReservationState

__all__ = ["Idempotency", "Reservation", "ReservationState"]

"""The ``idempotency`` battery: reserve-then-commit records that make retries safe.

Get the configured store from the registry (``services.idempotency()``) or a container
(``container.idempotency()``); pick ``memory`` (the default, one process), ``kvserver``
or ``db`` in settings. :mod:`.decorators` applies it to HTTP views through the
``Idempotency-Key`` header.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Idempotency Reservation ReservationState",
)

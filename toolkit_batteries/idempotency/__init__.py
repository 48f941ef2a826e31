"""The ``idempotency`` battery: reserve-then-commit records that make retries safe.

Get the configured store from the registry (``services.idempotency()``) or a container
(``container.idempotency()``); pick ``memory`` (the default, one process), ``kvserver``
or ``db`` in settings. :mod:`.decorators` applies it to HTTP views through the
``Idempotency-Key`` header.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Idempotency, Reservation, ReservationState

__all__ = ["Idempotency", "Reservation", "ReservationState"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Idempotency": "base",
    "Reservation": "base",
    "ReservationState": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

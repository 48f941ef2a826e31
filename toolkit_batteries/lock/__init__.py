"""The ``lock`` battery: named leases with a lifetime, in memory or on a key-value server.

Get the configured service from the registry (``services.lock()``) or a container
(``container.lock()``); pick ``memory`` (the default, one process) or ``kvserver``
(across processes and machines) in settings.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Lease, Lock, LockCapacityError, LockNotAcquiredError

__all__ = ["Lease", "Lock", "LockCapacityError", "LockNotAcquiredError"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Lease": "base",
    "Lock": "base",
    "LockCapacityError": "base",
    "LockNotAcquiredError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

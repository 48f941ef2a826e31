"""The ``lock`` battery: named leases with a lifetime, in memory or on a key-value server.

Get the configured service from the registry (``services.lock()``) or a container
(``container.lock()``); pick ``memory`` (the default, one process) or ``kvserver``
(across processes and machines) in settings.
"""

from __future__ import annotations

from .base import Lease, Lock, LockCapacityError, LockNotAcquiredError

__all__ = ["Lease", "Lock", "LockCapacityError", "LockNotAcquiredError"]

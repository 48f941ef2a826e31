"""The ``lock`` battery: named leases with a lifetime, in memory or on a key-value server.

Get the configured service from the registry (``services.lock()``) or a container
(``container.lock()``); pick ``memory`` (the default, one process) or ``kvserver``
(across processes and machines) in settings.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Lease Lock LockCapacityError LockNotAcquiredError",
)

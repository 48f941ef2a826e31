"""Prove that an opened service answers: one probe for ``toolkit doctor`` and ``/readyz``.

An adapter that opens lazily (a Redis client connects on its first command) says nothing
about whether its server is up, so both the CLI's ``doctor`` and the readiness view make
one round trip per service, the same way:

* the service's own ``ping()`` when it has one;
* a SQL battery's Django connection (``obj.database.ping()``);
* else one ``PING`` on each key-value client the service leased from the container's
  registry.

:func:`bounded` runs a probe on a daemon thread and gives up after a timeout, so one
server that never answers cannot hang the command or the request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["bounded", "probe"]


def probe(container: Any, service: str, instance: str) -> Any:
    """Open ``service``/``instance`` and prove it answers; return it, raise what failed."""
    obj = getattr(container, service)(instance)
    ping = getattr(obj, "ping", None)
    if callable(ping):
        ping()
        return obj
    database = getattr(obj, "database", None)
    if callable(getattr(database, "ping", None)):
        database.ping()
        return obj
    for client in container.pools.resources_of(f"{service}.{instance}"):
        client.ping()
    return obj


def bounded(function: Callable[[], None], timeout: float, name: str) -> BaseException | None:
    """Run ``function`` on a daemon thread; return its exception, a timeout, or ``None``."""
    outcome: list[BaseException] = []

    def target() -> None:
        try:
            function()
        except BaseException as exc:  # handed back to the caller, which reports it
            outcome.append(exc)

    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return TimeoutError(f"no answer within {timeout:g}s")
    return outcome[0] if outcome else None

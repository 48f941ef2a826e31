"""The process-wide key-value client registry under garbage collection.

A cache backend returns its lease through ``weakref.finalize``; the collector may run that
finalizer in the thread that is inside :meth:`KVClients.lease` (building a client
allocates). The registry must not deadlock on itself there.
"""

from __future__ import annotations

import threading
from typing import Any

from toolkit_batteries.core import kvclient
from toolkit_batteries.core.groups import KVServerConnection
from toolkit_batteries.core.kvclient import KVClients
from toolkit_batteries.core.pools import resolve_kv_address


def test_a_release_run_while_a_client_is_built_does_not_deadlock(monkeypatch):
    registry = KVClients()
    options = KVServerConnection(addr="127.0.0.1:6379")
    first = registry.lease(resolve_kv_address("cache", options), options, service="cache")
    built = kvclient.build_kv_client

    def build_while_collecting(*args: Any, **kwargs: Any) -> Any:
        registry.release(first)  # what the collector's finalizer does at this point
        return built(*args, **kwargs)

    monkeypatch.setattr(kvclient, "build_kv_client", build_while_collecting)
    other = KVServerConnection(addr="127.0.0.1:6379", db=3)
    found: dict[str, Any] = {}

    def lease_other() -> None:
        found["client"] = registry.lease(resolve_kv_address("cache", other), other, service="cache")

    thread = threading.Thread(target=lease_other, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "lease() deadlocked on a release run inside it"
    assert registry.leases(first) == 0  # the finalizer's release took effect
    assert registry.leases(found["client"]) == 1
    registry.close_all()

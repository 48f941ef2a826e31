"""Django's ``caches`` is the only registry of the cache battery (issue 24, item 4).

On the landed code a kvserver cache's address was parsed and its client leased twice
(once by the container's ``open``, once by the Django-held backend), and
``services.cache()`` found its object by matching a re-derived entry against ``CACHES``,
registering a ``toolkit_cache_<digest>`` alias at run time when none matched. Now the
backend decodes its options, parses the address and leases the client once, and
``services.cache()`` is ``caches["default"]`` with ``caches.settings`` left as settings
wrote it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import caches
from django.test import override_settings

from toolkit_batteries import services, slots
from toolkit_batteries.cache.adapters import kvserver
from toolkit_batteries.core import pools
from toolkit_batteries.core.kvclient import clients


def _counting(calls: Counter, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return function(*args, **kwargs)

    return counted


@pytest.mark.parametrize("adapter", ["kvserver", "memory"])
def test_services_cache_is_caches_default_built_once_and_nothing_registered(
    adapter, request, monkeypatch
):
    options = {"url": request.getfixturevalue("redis_url")} if adapter == "kvserver" else {}
    toolkit = {"cache": {"adapter": adapter, "options": options}}
    calls: Counter = Counter()
    monkeypatch.setattr(
        kvserver, "decode_options", _counting(calls, "decode", kvserver.decode_options)
    )
    monkeypatch.setattr(
        pools, "resolve_kv_address", _counting(calls, "parse", pools.resolve_kv_address)
    )
    monkeypatch.setattr(clients, "lease", _counting(calls, "lease", clients.lease))
    with override_settings(TOOLKIT=toolkit, CACHES=slots.caches(toolkit)):
        try:
            configured = dict(caches.settings)
            cache = services.cache()
            assert cache is caches["default"]
            assert services.cache() is cache
            assert dict(caches.settings) == configured  # no alias registered at run time
            if adapter == "kvserver":
                assert calls == Counter(decode=1, parse=1, lease=1)
                assert services.container().pools.describe() == []
        finally:
            services.reset()


def test_options_are_decoded_once_per_backend_object_and_threads_share_one_client(
    redis_url, monkeypatch
):
    """Django builds one backend per thread: each decodes once, all lease one client."""
    toolkit = {"cache": {"adapter": "kvserver", "options": {"url": redis_url}}}
    calls: Counter = Counter()
    monkeypatch.setattr(
        kvserver, "decode_options", _counting(calls, "decode", kvserver.decode_options)
    )
    monkeypatch.setattr(clients, "lease", _counting(calls, "lease", clients.lease))
    with override_settings(TOOLKIT=toolkit, CACHES=slots.caches(toolkit)):
        try:
            here = services.cache()
            here.get("warm")  # reads and writes decode nothing
            here.set("warm", 1, 5)
            box: list = []
            thread = threading.Thread(target=lambda: box.append(services.cache()))
            thread.start()
            thread.join()
            there = box[0]
            assert there is not here  # Django's per-thread object...
            assert there._redis is here._redis  # ...on the one process-wide client
            assert calls == Counter(decode=2, lease=2)
            assert clients.leases(here._redis) >= 2
            here.delete("warm")
        finally:
            services.reset()

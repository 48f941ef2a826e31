"""``KVServerKeys``: the wiring ``lock`` and ``idempotency`` share on a real Redis.

Both adapters declare a default prefix and their scripts and take the rest (client,
display-safe target, ``ttl_ms``, close, repr) from the mixin; these tests hold each
battery to what its adapter did by hand: prefix per instance, no password shown, a
closed adapter refusing with ``ServiceUnavailableError``.
"""

from __future__ import annotations

import uuid

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.kvkeys import ms


def _open(service: str, redis_url: str, instance: str = "default"):
    options = {"url": redis_url} if service == "lock" else {"kvserver": {"addr": redis_url}}
    block = {instance: {"adapter": "kvserver", "options": options}}
    container = Container(Config.load({service: block}, {}))
    return container, getattr(container, service)(instance)


def _write(service: str, adapter, key: str) -> None:
    if service == "lock":
        assert adapter.acquire(key, ttl=5) is not None
    else:
        assert adapter.reserve(key, ttl=5).token  # a new reservation carries its owner token


@pytest.mark.parametrize("service", ["lock", "idempotency"])
def test_prefix_ttl_repr_and_close(service, redis_url, raw):
    instance = "k" + uuid.uuid4().hex[:10]
    container, adapter = _open(service, redis_url, instance)
    try:
        assert adapter.prefix == f"toolkit:{service}:{instance}:"
        assert adapter.ttl_ms("absent") is None
        _write(service, adapter, "job")
        assert 4_000 < adapter.ttl_ms("job") <= 5_000
        shown = repr(adapter)
        assert shown.startswith(f"<{type(adapter).__name__} {service}.{instance} ")
        assert adapter.target and adapter.target in shown
        adapter.close()
        with pytest.raises(ServiceUnavailableError, match="closed"):
            adapter.ttl_ms("job")
        with pytest.raises(ServiceUnavailableError, match="closed"):
            _write(service, adapter, "other")
    finally:
        raw.delete(f"toolkit:{service}:{instance}:job")
        container.close()


def test_the_target_never_shows_the_password():
    url = "redis://:pw-hunter2@127.0.0.1:6379/15"  # nothing connects while opening
    container = Container(
        Config.load({"lock": {"adapter": "kvserver", "options": {"url": url}}}, {})
    )
    try:
        lock = container.lock()
        assert "pw-hunter2" not in repr(lock) and "pw-hunter2" not in lock.target
    finally:
        container.close()


def test_ms_rounds_down_but_never_to_zero():
    assert ms(1.5) == 1500
    assert ms(0.0001) == 1
    assert ms(0) == 1

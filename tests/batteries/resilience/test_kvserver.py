"""The kvserver adapter: breaker state shared across processes, on the server's clock."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import redis

from tests.ports import free_port
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.resilience import BreakerOpenError
from toolkit_batteries.resilience.adapters.kvserver import (
    SCRIPT_SHA,
    KVServerPolicy,
    breaker_key,
)
from toolkit_batteries.resilience.base import settings_from_options

from ..ratelimit.private_redis import PrivateRedis
from .conftest import options_for

pytestmark = pytest.mark.redis

ROOT = __file__.rsplit("/tests/", 1)[0]
CHILD = (sys.executable, "-m", "tests.batteries.resilience.child_breaker")


def trip(policy, times: int = 5) -> None:
    for _ in range(times):
        with pytest.raises(ValueError):
            policy.call(_boom)


def _boom():
    raise ValueError("boom")


def open_policy(redis_url: str, prefix: str, **options) -> tuple[Container, KVServerPolicy]:
    block = {"kvserver": {"addr": redis_url, "prefix": prefix}, **options}
    container = Container(Config.load({"resilience": {"adapter": "redis", "options": block}}, {}))
    return container, container.resilience()


def test_a_breaker_tripped_here_is_open_in_another_process(redis_url, prefix):
    container, policy = open_policy(
        redis_url, prefix, name="payments", breaker={"enabled": True}, retry={"MaxAttempts": -1}
    )
    trip(policy)  # five consecutive failures, the default
    assert policy.breaker_state() == "open"
    # Two other processes at once: one asks the tripped breaker, one another breaker.
    children = {
        name: subprocess.Popen(
            [*CHILD, redis_url, prefix, name], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        for name in ("payments", "search")
    }
    reports = {
        name: json.loads(child.communicate(timeout=30)[0]) for name, child in children.items()
    }
    assert reports["payments"] == {"state": "open", "refused": True, "ran": False}
    assert reports["search"] == {"state": "closed", "refused": False, "ran": True}
    container.close()


def test_state_lives_in_one_hash_under_the_prefix_with_a_ttl(redis_client, redis_url, prefix):
    container, policy = open_policy(
        redis_url,
        prefix,
        name="svc",
        breaker={"enabled": True, "interval": "20s", "bucket_period": "10s", "timeout": "45s"},
        retry={"MaxAttempts": -1},
    )
    key = breaker_key(prefix, "svc")
    assert key == f"{prefix}:breaker:svc"
    assert breaker_key("ns:", "svc") == "ns:breaker:svc"
    policy.call(lambda: None)
    trip(policy, 1)
    state = redis_client.hgetall(key)
    assert state[b"state"] == b"closed" and state[b"cons"] == b"1"
    slots = {k: v for k, v in state.items() if k[:1] in (b"s", b"f") and k[1:].isdigit()}
    assert sorted(int(v) for v in slots.values()) == [1, 1]  # one success, one failure
    assert 89_000 < redis_client.pttl(key) <= 90_000  # 2 x max(20 s, 45 s)
    container.close()


def test_the_server_clock_moves_open_to_half_open(redis_url, prefix):
    container, policy = open_policy(
        redis_url,
        prefix,
        breaker={"enabled": True, "consecutive_failures": 1, "timeout": "1s"},
        retry={"MaxAttempts": -1},
    )
    trip(policy, 1)
    with pytest.raises(BreakerOpenError) as caught:
        policy.call(lambda: None)
    assert 0 < caught.value.retry_after <= 1.0
    time.sleep(caught.value.retry_after + 0.02)
    assert policy.breaker_state() == "half-open"
    policy.call(lambda: None)
    assert policy.breaker_state() == "closed"
    container.close()


def test_opening_needs_the_server_only_with_a_breaker():
    addr = f"redis://:hunter2-secret@127.0.0.1:{free_port()}/0"
    without = Container(
        Config.load(
            {"resilience": {"adapter": "kvserver", "options": {"kvserver": {"addr": addr}}}}, {}
        )
    )
    assert without.resilience().call(lambda: 7) == 7  # nothing to share, nothing to reach
    without.close()
    settings = {"kvserver": {"addr": addr}, "breaker": {"enabled": True}}
    container = Container(
        Config.load({"resilience": {"adapter": "kvserver", "options": settings}}, {})
    )
    with pytest.raises(ServiceUnavailableError) as caught:
        container.resilience()
    assert "hunter2-secret" not in str(caught.value) + repr(caught.value.__cause__)
    container.close()


def test_an_unreachable_breaker_store_lets_calls_through_with_a_warning(caplog):
    from toolkit_batteries.core.groups import KVServerBlock
    from toolkit_batteries.core.pools import PoolRegistry

    registry = PoolRegistry()  # the client the container would build: bounded, no retries
    client = registry.kvserver("resilience", KVServerBlock(addr=f"127.0.0.1:{free_port()}"))
    settings = settings_from_options(
        options_for(breaker={"enabled": True, "consecutive_failures": 1}, retry={"MaxAttempts": -1})
    )
    policy = KVServerPolicy(settings, client, prefix="p")
    started = time.monotonic()
    assert policy.call(lambda: "still works") == "still works"
    with pytest.raises(ValueError):
        policy.call(_boom)
    assert policy.call(lambda: "not tripped") == "not tripped"
    assert time.monotonic() - started < 2
    assert caplog.text.count("breaker store unreachable") == 1  # once per 10 s
    with pytest.raises(ServiceUnavailableError):
        policy.breaker_state()
    policy.close()
    registry.close()


def test_a_restarted_server_gets_the_script_again():
    server = PrivateRedis()
    server.start()
    try:
        client = redis.Redis.from_url(server.url)
        settings = settings_from_options(
            options_for(
                breaker={"enabled": True, "consecutive_failures": 2}, retry={"MaxAttempts": -1}
            )
        )
        policy = KVServerPolicy(settings, client, prefix="p")
        policy.store.load()
        trip(policy, 1)
        server.stop()
        server.start()  # no script, no state: the breaker starts closed again
        assert client.script_exists(SCRIPT_SHA) == [False]
        trip(policy, 2)
        assert policy.breaker_state() == "open"
        client.close()
    finally:
        server.stop()


def test_after_an_outage_the_store_is_skipped_briefly_then_used_again(monkeypatch, caplog):
    from toolkit_batteries.core.groups import KVServerBlock
    from toolkit_batteries.core.pools import PoolRegistry
    from toolkit_batteries.resilience.adapters import kvserver

    # Long enough that restarting the server (slow on a loaded machine) ends inside it.
    monkeypatch.setattr(kvserver, "RETRY_STORE_AFTER", 5.0)
    server = PrivateRedis()
    server.start()
    registry = PoolRegistry()
    try:
        client = registry.kvserver("resilience", KVServerBlock(addr=server.addr))
        settings = settings_from_options(options_for(breaker={"enabled": True}))
        policy = KVServerPolicy(settings, client, prefix="p")
        key = policy.store.key(policy.name)
        policy.call(lambda: None)
        assert client.exists(key)
        server.stop()
        assert policy.call(lambda: "degraded") == "degraded"
        assert "breaker store unreachable" in caplog.text
        server.start()
        policy.call(lambda: None)  # within the skip window: the store is not asked
        assert not client.exists(key)
        time.sleep(max(0.0, policy.store._skip_until - time.monotonic()) + 0.05)  # its end
        policy.call(lambda: None)
        assert client.exists(key)  # asked again, and recording again
    finally:
        registry.close()
        server.stop()

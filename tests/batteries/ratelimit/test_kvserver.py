"""The kvserver adapter on real Redis: server time, key layout, expiry, faults."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import redis

from tests.support.redis_server import drop_redis_prefix as delete_prefixed
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.ratelimit.adapters.kvserver import (
    SCRIPT_SHA,
    KVServerRateLimiter,
    bucket_key,
)
from toolkit_batteries.ratelimit.base import Limits

from .conftest import unique_prefix

pytestmark = pytest.mark.redis

ROOT = __file__.rsplit("/tests/", 1)[0]


def test_keys_live_under_the_prefix_and_expire_after_idle_ttl(redis_client, prefix, clock):
    limiter = KVServerRateLimiter(
        redis_client, Limits(rate=1, burst=5, idle_ttl=120), prefix=prefix, clock=clock
    )
    limiter.allow("user:7", 2)
    key = bucket_key(prefix, "user:7")
    assert key == f"{prefix}ratelimit:user:7"
    state = redis_client.hgetall(key)
    assert float(state[b"tokens"]) == 3.0
    assert float(state[b"ts"]) == clock.now * 1000
    assert 119_000 < redis_client.pttl(key) <= 120_000


def test_expiry_never_comes_before_the_bucket_would_be_full(redis_client, prefix, clock):
    limiter = KVServerRateLimiter(
        redis_client, Limits(rate=0.01, burst=10, idle_ttl=5), prefix=prefix, clock=clock
    )
    limiter.allow("k")
    assert 999_000 < redis_client.pttl(bucket_key(prefix, "k")) <= 1_000_000  # 10 / 0.01 s


def test_an_expired_bucket_comes_back_full(redis_client, prefix, clock):
    limiter = KVServerRateLimiter(redis_client, Limits(rate=1, burst=3), prefix=prefix, clock=clock)
    limiter.allow("k", 3)
    assert not limiter.allow("k")
    redis_client.delete(bucket_key(prefix, "k"))  # what PEXPIRE does when idle_ttl passes
    assert limiter.allow("k").remaining == 2


def test_server_time_refills_without_an_injected_clock(redis_client, prefix):
    limiter = KVServerRateLimiter(redis_client, Limits(rate=50, burst=1), prefix=prefix)
    assert limiter.allow("k")
    refused = limiter.allow("k")
    assert not refused.allowed and 0 < refused.retry_after <= 0.02
    time.sleep(refused.retry_after + 0.005)
    assert limiter.allow("k")


def test_opens_from_configuration_with_the_shared_client(container_for, redis_url, prefix):
    container = container_for(
        {
            "adapter": "redis",
            "options": {"rate": 3, "burst": 2, "kvserver": {"addr": redis_url, "prefix": prefix}},
        }
    )
    limiter = container.ratelimit()
    assert isinstance(limiter, KVServerRateLimiter)
    assert limiter.prefix == f"{prefix}ratelimit:"
    assert limiter.allow("k").remaining == 1
    assert container.pools.describe()  # the client is the registry's, closed by it


def test_unreachable_server_fails_the_open_clearly_without_the_password(container_for):
    from tests.ports import free_port

    addr = f"redis://:sup3r-secret@127.0.0.1:{free_port()}/0"
    container = container_for({"adapter": "kvserver", "options": {"kvserver": {"addr": addr}}})
    started = time.monotonic()
    with pytest.raises(ServiceUnavailableError) as caught:
        container.ratelimit()
    assert time.monotonic() - started < 3
    assert str(caught.value) == (
        "ratelimit.default: unavailable: the key-value server did not answer"
    )
    assert "sup3r-secret" not in repr(caught.value) + str(caught.value.__cause__)


def test_restart_mid_run_gives_a_clear_error_then_recovers(private_redis):
    client = redis.Redis.from_url(private_redis.url)
    limiter = KVServerRateLimiter(client, Limits(rate=1, burst=2), prefix="p:")
    assert limiter.allow("k").remaining == 1
    private_redis.stop()
    started = time.monotonic()
    with pytest.raises(ServiceUnavailableError, match="did not answer"):
        limiter.allow("k")
    assert time.monotonic() - started < 3  # refused at once, retried briefly: no hang
    private_redis.start()  # a fresh server: no keys and, above all, no loaded script
    assert client.script_exists(SCRIPT_SHA) == [False]
    assert limiter.allow("k").remaining == 1  # NOSCRIPT -> SCRIPT LOAD -> EVALSHA again
    assert client.script_exists(SCRIPT_SHA) == [True]
    client.close()


def test_script_flush_is_survived(private_redis):
    client = redis.Redis.from_url(private_redis.url)
    limiter = KVServerRateLimiter(client, Limits(rate=1, burst=2), prefix="p:")
    limiter.allow("k")
    client.script_flush()  # private server: flushing scripts harms no one else
    assert limiter.allow("k").remaining == 0
    client.close()


def test_eight_processes_never_exceed_the_bucket(redis_client, redis_url):
    """burst + rate x elapsed bounds the allowed decisions summed over all processes."""
    prefix = unique_prefix()
    rate, burst, seconds = 40.0, 10, 1.0
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.batteries.ratelimit.child_allow",
                redis_url,
                prefix,
                str(rate),
                str(burst),
                str(seconds),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    try:
        for child in children:
            assert child.stdout.readline().strip() == "ready"
        redis_client.set(f"{prefix}start", 1)
        reports = [json.loads(child.communicate(timeout=30)[0]) for child in children]
    finally:
        for child in children:
            child.kill()
        delete_prefixed(redis_client, prefix)
    allowed = sum(r["allowed"] for r in reports)
    total = sum(r["total"] for r in reports)
    elapsed = max(r["last"] for r in reports) - min(r["first"] for r in reports)
    bound = burst + rate * elapsed
    print(f"8 processes: {allowed} allowed of {total}, bound {bound:.1f}")
    assert allowed <= bound + 1e-6, (allowed, bound)
    # The bound is tight, not vacuous: nearly all of it was handed out, and most
    # decisions were refusals, so the processes really competed.
    assert allowed >= burst + rate * seconds * 0.8
    assert total > 2 * allowed

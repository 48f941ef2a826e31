"""The kvserver lock adapter on real Redis: keys, owner tokens, processes, faults."""

from __future__ import annotations

import multiprocessing
import time

import pytest
import redis

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError

from ..cache.helpers import PrivateRedis, unique


@pytest.fixture
def prefix(raw):
    value = unique("t-") + ":"
    yield value
    keys = list(raw.scan_iter(match=value + "*"))
    if keys:
        raw.delete(*keys)


def open_kv(url: str, **options):
    container = Container(
        Config.load({"lock": {"adapter": "kvserver", "options": {"url": url, **options}}}, {})
    )
    return container, container.lock()


def test_leases_are_keys_holding_the_token(redis_url, raw, prefix):
    container, lock = open_kv(redis_url, prefix=prefix)
    lease = lock.acquire("job", ttl=10)
    assert raw.get(prefix + "job") == lease.token.encode()
    assert 9_000 < raw.pttl(prefix + "job") <= 10_000
    lease.release()
    assert raw.exists(prefix + "job") == 0
    container.close()


def test_the_default_prefix_names_the_instance(redis_url):
    container = Container(
        Config.load({"lock": {"jobs": {"adapter": "kvserver", "options": {"url": redis_url}}}}, {})
    )
    assert container.lock("jobs").prefix == "toolkit:lock:jobs:"
    container.close()


def test_release_compares_the_token_on_the_server(redis_url, raw, prefix):
    container, lock = open_kv(redis_url, prefix=prefix)
    lease = lock.acquire("job", ttl=10)
    raw.set(prefix + "job", "someone-else", px=10_000)  # the lease was lost and retaken
    assert lease.release() is False
    assert raw.get(prefix + "job") == b"someone-else"
    other = lock.acquire("job2", ttl=10)
    raw.set(prefix + "job2", "intruder", keepttl=True)
    assert other.refresh(30) is False and other.extend(30) is False
    assert raw.pttl(prefix + "job2") <= 10_000
    container.close()


def test_require_tls_is_refused_before_connecting(redis_url):
    container = Container(
        Config.load(
            {"lock": {"adapter": "kvserver", "options": {"url": redis_url, "require_tls": True}}},
            {},
        )
    )
    with pytest.raises(InvalidOptionsError, match=r'lock\.default: option "require_tls"'):
        container.lock()
    assert container.pools.describe() == []
    container.close()


def _contend(
    url: str, prefix: str, log_key: str, start: multiprocessing.Event, rounds: int
) -> None:
    """Child process: enter the critical section ``rounds`` times, logging enter/exit."""
    container, lock = open_kv(url, prefix=prefix, retry_interval="2ms")
    log = redis.Redis.from_url(url)
    start.wait(10)
    for _ in range(rounds):
        with lock.hold("critical", ttl=10, wait=30):
            me = str(multiprocessing.current_process().pid)
            log.rpush(log_key, f"enter:{me}:{time.time()}")
            time.sleep(0.002)
            log.rpush(log_key, f"exit:{me}:{time.time()}")
    log.close()
    container.close()


def test_eight_processes_never_overlap(redis_url, raw, prefix):
    log_key = prefix + "log"
    context = multiprocessing.get_context("fork")
    start = context.Event()
    processes = [
        context.Process(target=_contend, args=(redis_url, prefix, log_key, start, 5))
        for _ in range(8)
    ]
    for process in processes:
        process.start()
    start.set()
    for process in processes:
        process.join(60)
    assert [p.exitcode for p in processes] == [0] * 8
    events = [item.decode().split(":") for item in raw.lrange(log_key, 0, -1)]
    assert len(events) == 8 * 5 * 2
    pids = set()
    for i in range(0, len(events), 2):
        (kind_in, pid_in, t_in), (kind_out, pid_out, t_out) = events[i], events[i + 1]
        assert (kind_in, kind_out) == ("enter", "exit") and pid_in == pid_out
        assert float(t_in) <= float(t_out)
        if i:
            assert float(events[i - 1][2]) <= float(t_in)  # the previous holder left first
        pids.add(pid_in)
    assert len(pids) == 8


def test_unreachable_server_fails_fast_and_recovers(tmp_path):
    server = PrivateRedis(tmp_path)
    server.start()
    container, lock = open_kv(server.url)
    try:
        lease = lock.acquire("job")
        assert lease is not None
        server.kill()
        started = time.monotonic()
        with pytest.raises(ServiceUnavailableError, match=r"lock\.default: unavailable"):
            lock.acquire("job", wait=5)  # fails at once, does not retry for 5 s
        with pytest.raises(ServiceUnavailableError):
            lease.refresh()
        assert time.monotonic() - started < 2.0
        server.start()
        again = lock.acquire("job")  # the new server is empty: the name is free
        assert again is not None and again.held()
    finally:
        container.close()
        server.kill()

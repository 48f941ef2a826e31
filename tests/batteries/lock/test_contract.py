"""One contract for every lock adapter: memory and kvserver (real Redis)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from tests.support.batteries import assert_opened_as
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.lock import Lease, Lock, LockNotAcquiredError


class TestLockContract:
    """The same calls, the same answers, on every adapter."""

    def test_identity(self, opened):
        assert_opened_as(opened.lock, Lock, opened.variant, opened.container, "lock")

    def test_a_free_name_is_acquired_once(self, opened):
        lease = opened.lock.acquire("job")
        assert isinstance(lease, Lease) and lease.name == "job" and len(lease.token) == 32
        assert opened.lock.acquire("job") is None
        assert opened.lock.acquire("other-job") is not None
        assert opened.lock.locked("job") and lease.held()

    def test_release_frees_the_name_once(self, opened):
        lease = opened.lock.acquire("job")
        assert lease.release() is True
        assert lease.release() is False
        assert not opened.lock.locked("job") and not lease.held()
        assert opened.lock.acquire("job") is not None

    def test_default_ttl_is_thirty_seconds(self, opened):
        lease = opened.lock.acquire("job")
        assert lease.ttl == 30.0 == opened.lock.default_ttl
        if opened.clock is not None:
            opened.elapse(29.9)
            assert opened.lock.acquire("job") is None
            opened.elapse(0.2)
            assert opened.lock.acquire("job") is not None
        else:
            assert 29_000 < opened.lock.ttl_ms("job") <= 30_000

    def test_an_expired_lease_can_be_taken_and_cannot_release_its_successor(self, opened):
        first = opened.lock.acquire("job", ttl=1)
        opened.elapse(1.1)
        assert not first.held()
        second = opened.lock.acquire("job", ttl=30)
        assert second is not None
        assert first.release() is False
        assert first.refresh() is False and first.extend(10) is False
        assert second.held() and opened.lock.locked("job")

    def test_refresh_restarts_the_lifetime(self, opened):
        lease = opened.lock.acquire("job", ttl=1)
        assert lease.refresh(timedelta(seconds=30)) is True and lease.ttl == 30
        opened.elapse(1.1)
        assert lease.held()
        assert lease.refresh() is True

    def test_extend_adds_time(self, opened):
        lease = opened.lock.acquire("job", ttl=1)
        assert lease.extend(30) is True
        opened.elapse(1.1)
        assert lease.held()
        with pytest.raises(ValueError):
            lease.extend(0)

    def test_wait_retries_until_the_holder_releases(self, opened):
        holder = opened.lock.acquire("job", ttl=30)
        timer = threading.Timer(0.1, holder.release)
        timer.start()
        started = time.monotonic()
        lease = opened.lock.acquire("job", wait=5)
        timer.join()
        assert lease is not None and lease.held()
        assert time.monotonic() - started < 2

    def test_wait_gives_up_after_wait(self, opened):
        opened.lock.acquire("job", ttl=30)
        started = time.monotonic()
        assert opened.lock.acquire("job", wait=timedelta(milliseconds=150)) is None
        assert time.monotonic() - started >= 0.14

    def test_hold_raises_when_taken_and_releases_on_exit(self, opened):
        with opened.lock.hold("job") as lease:
            assert lease.held()
            with pytest.raises(LockNotAcquiredError, match='"job"'), opened.lock.hold("job"):
                pass
        assert not opened.lock.locked("job")

    def test_a_lease_releases_when_its_block_raises(self, opened):
        lease = opened.lock.acquire("job")
        with pytest.raises(RuntimeError), lease:
            raise RuntimeError("boom")
        assert not opened.lock.locked("job")

    @pytest.mark.parametrize("name", ["a", "ünï/cødé:*?[x]", "n" * 1000])
    def test_any_non_empty_name(self, opened, name):
        lease = opened.lock.acquire(name)
        assert lease is not None and opened.lock.acquire(name) is None
        assert lease.release()

    def test_bad_arguments_are_refused(self, opened):
        with pytest.raises(ValueError):
            opened.lock.acquire("")
        with pytest.raises(ValueError):
            opened.lock.acquire("job", ttl=0)
        with pytest.raises(ValueError):
            opened.lock.acquire("job", ttl=-1)
        with pytest.raises(ValueError):
            opened.lock.acquire("job", wait=-1)
        with pytest.raises(TypeError):
            opened.lock.acquire("job", ttl="30s")

    def test_threads_never_overlap(self, opened):
        inside, overlaps, entries = [0], [0], [0]
        guard = threading.Lock()

        def worker(_: int) -> None:
            for _ in range(5):
                with opened.lock.hold("critical", wait=10):
                    with guard:
                        inside[0] += 1
                        overlaps[0] += inside[0] > 1
                        entries[0] += 1
                    time.sleep(0.001)
                    with guard:
                        inside[0] -= 1

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(worker, range(16)))
        assert entries[0] == 80 and overlaps[0] == 0

    def test_use_after_close_raises(self, opened):
        lease = opened.lock.acquire("job")
        opened.container.close()
        with pytest.raises(ServiceUnavailableError, match=r"lock\.default"):
            opened.lock.acquire("job")
        with pytest.raises(ServiceUnavailableError):
            lease.release()
        opened.lock.close()  # a second close is harmless

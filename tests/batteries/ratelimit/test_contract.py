"""One contract for every ratelimit adapter: memory and kvserver (real Redis).

The clock is fake, so every figure below is exact arithmetic, not a timing guess.
"""

from __future__ import annotations

import threading

import pytest

from toolkit_batteries.ratelimit import Decision, RateLimiter, RateLimiterClosedError


class TestRateLimiterContract:
    def test_a_new_bucket_is_full_and_counts_down(self, make_limiter):
        limiter = make_limiter(rate=1, burst=3)
        assert isinstance(limiter, RateLimiter)
        decisions = [limiter.allow("k") for _ in range(4)]
        assert [d.allowed for d in decisions] == [True, True, True, False]
        assert [d.remaining for d in decisions] == [2, 1, 0, 0]
        assert {d.limit for d in decisions} == {3}
        assert [d.retry_after for d in decisions[:3]] == [0.0, 0.0, 0.0]

    def test_retry_after_is_the_time_until_cost_tokens_exist(self, make_limiter, clock):
        limiter = make_limiter(rate=4, burst=2)
        limiter.allow("k", 2)
        refused = limiter.allow("k")
        assert not refused.allowed
        assert refused.retry_after == pytest.approx(0.25)
        clock.advance(0.125)  # half a token
        refused = limiter.allow("k")
        assert refused.retry_after == pytest.approx(0.125)
        assert limiter.allow("k", 2).retry_after == pytest.approx(0.375)

    def test_refill_is_continuous_and_capped_at_burst(self, make_limiter, clock):
        limiter = make_limiter(rate=10, burst=5)
        for _ in range(5):
            assert limiter.allow("k")
        assert not limiter.allow("k")
        clock.advance(0.1)  # exactly one token
        assert limiter.allow("k").allowed
        assert not limiter.allow("k").allowed
        clock.advance(3600)  # far more than needed: the bucket holds burst, no more
        decisions = [limiter.allow("k") for _ in range(6)]
        assert [d.allowed for d in decisions] == [True] * 5 + [False]
        assert decisions[0].remaining == 4

    def test_a_refusal_takes_nothing(self, make_limiter, clock):
        limiter = make_limiter(rate=1, burst=1)
        assert limiter.allow("k")
        for _ in range(5):
            assert not limiter.allow("k")
        clock.advance(1.0)
        assert limiter.allow("k")

    def test_cost_takes_several_tokens_and_zero_only_reports(self, make_limiter):
        limiter = make_limiter(rate=1, burst=10)
        assert limiter.allow("k", 4).remaining == 6
        report = limiter.allow("k", 0)
        assert report.allowed and report.remaining == 6
        assert limiter.allow("k", 6).remaining == 0
        refused = limiter.allow("k", 3)
        assert not refused.allowed and refused.retry_after == pytest.approx(3.0)
        assert limiter.allow("k", 0).allowed  # cost 0 is always allowed

    @pytest.mark.parametrize(
        ("cost", "error"), [(-1, ValueError), (11, ValueError), (True, TypeError), (1.5, TypeError)]
    )
    def test_invalid_costs_are_refused(self, make_limiter, cost, error):
        limiter = make_limiter(rate=1, burst=10)
        with pytest.raises(error):
            limiter.allow("k", cost)
        assert limiter.allow("k").remaining == 9  # nothing was taken

    def test_keys_are_independent_including_odd_ones(self, make_limiter):
        limiter = make_limiter(rate=1, burst=1)
        keys = ["a", "b", "", "ünïcødé:ключ", "x" * 10_000, "with space:and:colons"]
        assert all(limiter.allow(k).allowed for k in keys)
        assert not any(limiter.allow(k).allowed for k in keys)

    def test_fractional_rate(self, make_limiter, clock):
        limiter = make_limiter(rate=0.5, burst=1)
        assert limiter.allow("k")
        refused = limiter.allow("k")
        assert refused.retry_after == pytest.approx(2.0)
        assert refused.retry_after_seconds == 2
        clock.advance(1.999)
        assert not limiter.allow("k")
        clock.advance(0.001)
        assert limiter.allow("k")

    def test_reset_refills_one_key_only(self, make_limiter):
        limiter = make_limiter(rate=1, burst=2)
        limiter.allow("a", 2)
        limiter.allow("b", 2)
        limiter.reset("a")
        limiter.reset("never-seen")
        assert limiter.allow("a").remaining == 1
        assert not limiter.allow("b")

    def test_decision_is_truthy_exactly_when_allowed(self, make_limiter):
        limiter = make_limiter(rate=1, burst=1)
        allowed, refused = limiter.allow("k"), limiter.allow("k")
        assert isinstance(allowed, Decision) and bool(allowed) and not bool(refused)
        assert allowed == Decision(True, 0, 0.0, 1) and allowed != refused
        assert "allowed=False" in repr(refused)
        assert allowed.retry_after_seconds == 1  # never 0 for a header

    def test_threads_sharing_a_key_get_exactly_burst(self, make_limiter):
        limiter = make_limiter(rate=1, burst=25)  # the clock is frozen: no refill
        allowed: list[bool] = []
        lock = threading.Lock()

        def hammer() -> None:
            mine = [limiter.allow("shared").allowed for _ in range(20)]
            with lock:
                allowed.extend(mine)

        threads = [threading.Thread(target=hammer) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(allowed) == 160 and allowed.count(True) == 25

    def test_use_after_close_raises_and_close_twice_is_fine(self, make_limiter):
        limiter = make_limiter(rate=1, burst=1)
        limiter.close()
        limiter.close()
        with pytest.raises(RateLimiterClosedError, match=r"ratelimit\.default"):
            limiter.allow("k")
        with pytest.raises(RateLimiterClosedError):
            limiter.reset("k")

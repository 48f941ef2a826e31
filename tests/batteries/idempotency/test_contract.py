"""One contract for every idempotency adapter: memory, kvserver, db (SQLite, PostgreSQL)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from tests.support.batteries import assert_opened_as
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.idempotency import Idempotency, Reservation, ReservationState

NEW, IN_PROGRESS, COMPLETED = (
    ReservationState.NEW,
    ReservationState.IN_PROGRESS,
    ReservationState.COMPLETED,
)


class TestIdempotencyContract:
    """The same calls, the same answers, on every adapter."""

    def test_identity(self, opened):
        adapter = opened.variant.split("-")[0]
        assert_opened_as(
            opened.store, Idempotency, adapter, opened.container, "idempotency", opened.instance
        )

    def test_first_reservation_owns_the_key(self, opened):
        first = opened.store.reserve("order-1", fingerprint="fp")
        assert isinstance(first, Reservation) and first.state is NEW and first.owned
        assert len(first.token) == 32 and first.fingerprint == "fp" and first.response is None
        second = opened.store.reserve("order-1", fingerprint="fp")
        assert second.state is IN_PROGRESS and not second.owned and second.token == ""
        assert opened.store.reserve("order-2").state is NEW

    def test_commit_stores_the_response_for_replay(self, opened):
        reservation = opened.store.reserve("k", fingerprint="fp")
        response = {"id": 7, "items": ["a", "ü"], "ok": True, "none": None}
        assert reservation.commit(response) is True
        replay = opened.store.reserve("k", fingerprint="other")
        assert replay.state is COMPLETED and replay.response == response
        assert replay.fingerprint == "fp"  # the first request's, for the caller to compare
        assert reservation.commit({"again": 1}) is False  # already completed

    def test_bytes_responses_come_back_as_bytes(self, opened):
        payload = bytes(range(256)) * 4
        opened.store.reserve("k").commit(payload)
        assert opened.store.reserve("k").response == payload

    def test_commit_and_release_check_the_owner_token(self, opened):
        mine = opened.store.reserve("k")
        assert opened.store.commit("k", {"x": 1}, token="not-mine") is False
        assert opened.store.release("k", token="not-mine") is False
        assert opened.store.get("k").state is IN_PROGRESS
        assert opened.store.commit("k", {"x": 1}, token=mine.token) is True

    def test_commit_without_a_token_completes_any_in_progress_key(self, opened):
        opened.store.reserve("k")
        assert opened.store.commit("k", b"done") is True
        assert opened.store.get("k").response == b"done"
        assert opened.store.commit("absent", b"x") is False

    def test_release_lets_a_retry_run_but_never_drops_a_result(self, opened):
        first = opened.store.reserve("k")
        assert first.release() is True
        assert first.release() is False
        retry = opened.store.reserve("k")
        assert retry.state is NEW
        retry.commit({"v": 1})
        assert opened.store.release("k") is False
        assert opened.store.reserve("k").state is COMPLETED

    def test_default_ttl_is_a_day(self, opened):
        assert opened.store.default_ttl == 24 * 3600
        opened.store.reserve("k")
        if opened.clock is not None:
            opened.elapse(24 * 3600 - 1)
            assert opened.store.reserve("k").state is IN_PROGRESS
            opened.elapse(2)
            assert opened.store.reserve("k").state is NEW
        else:
            assert 86_390_000 < opened.store.ttl_ms("k") <= 86_400_000

    def test_an_expired_reservation_is_taken_over(self, opened):
        # No step has to beat this lifetime (only the wait, at least 0.25 s, outlasts it),
        # so it stays short even on Redis's real clock.
        stale = opened.store.reserve("k", ttl=0.2)
        opened.elapse(0.25)
        assert opened.store.get("k") is None
        fresh = opened.store.reserve("k", ttl=timedelta(seconds=30))
        assert fresh.state is NEW and fresh.token != stale.token
        assert stale.commit({"late": True}) is False  # the stale owner cannot overwrite
        assert stale.release() is False
        assert fresh.commit({"on": "time"}) is True

    def test_commit_restarts_the_lifetime(self, opened):
        # The commit has to land before the reservation expires: 1 s, not 0.2 s, so a
        # loaded two-core machine cannot make it late on Redis's real clock.
        reservation = opened.store.reserve("k", ttl=1.0)
        assert reservation.commit({"v": 1}, ttl=30) is True
        opened.elapse(1.1)
        assert opened.store.reserve("k").state is COMPLETED

    def test_a_completed_record_expires(self, opened):
        # Only the wait has to outlast this lifetime: it stays short.
        opened.store.reserve("k").commit({"v": 1}, ttl=0.2)
        opened.elapse(0.25)
        assert opened.store.reserve("k").state is NEW

    def test_get_and_delete(self, opened):
        assert opened.store.get("k") is None
        opened.store.reserve("k", fingerprint="fp")
        found = opened.store.get("k")
        assert (found.state, found.fingerprint) == (IN_PROGRESS, "fp")
        assert opened.store.delete("k") is True
        assert opened.store.delete("k") is False
        assert opened.store.reserve("k").state is NEW

    @pytest.mark.parametrize("key", ["x", "ünï-cødé ✓", "k" * 255, "a:b*[c]?"])
    def test_any_key_up_to_255_characters(self, opened, key):
        assert opened.store.reserve(key).state is NEW
        assert opened.store.reserve(key).state is IN_PROGRESS

    @pytest.mark.parametrize("key", ["", "k" * 256, None, 5])
    def test_bad_keys_are_refused(self, opened, key):
        with pytest.raises(ValueError):
            opened.store.reserve(key)

    def test_bad_arguments_are_refused(self, opened):
        reservation = opened.store.reserve("k")
        with pytest.raises(TypeError, match="JSON"):
            reservation.commit({"not": object()})
        assert opened.store.get("k").state is IN_PROGRESS  # nothing was stored
        with pytest.raises(ValueError):
            opened.store.reserve("k2", ttl=0)
        with pytest.raises(RuntimeError):
            opened.store.reserve("k").commit({})  # not the owner

    def test_sixteen_threads_one_winner(self, opened):
        barrier = threading.Barrier(16)

        def reserve(_: int) -> ReservationState:
            barrier.wait()
            return opened.store.reserve("contended", fingerprint="fp").state

        with ThreadPoolExecutor(16) as pool:
            states = list(pool.map(reserve, range(16)))
        assert states.count(NEW) == 1 and states.count(IN_PROGRESS) == 15

    def test_use_after_close_raises(self, opened):
        opened.store.reserve("k")
        opened.container.close()
        with pytest.raises(ServiceUnavailableError, match=f"idempotency.{opened.instance}"):
            opened.store.reserve("k")
        opened.store.close()  # a second close is harmless

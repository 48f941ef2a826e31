"""Issue 12 defect 10 (session): ``SessionStore.create`` never loops forever.

On the landed code ``create`` drew ids until one was free, with no bound: a store that
keeps answering "taken" (a broken random source, a faulty adapter) hung the request. Here
the ids really collide, on the real stores: the random source is pinned to one id, the
first ``create`` stores it, and the next one must give up after a few draws.
"""

from __future__ import annotations

import threading

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.session import base

STUCK_ID = "s" * 43


@pytest.mark.parametrize("adapter", ["memory", "kvserver", "db"])
def test_session_create_gives_up_when_every_fresh_id_is_taken(adapter, request, monkeypatch):
    options: dict = {}
    if adapter == "kvserver":
        prefix = f"t-sec-{threading.get_ident()}-{id(request)}:"
        options = {"kvserver": {"addr": request.getfixturevalue("redis_url"), "prefix": prefix}}
    elif adapter == "db":
        options = {"dsn": request.getfixturevalue("sqlite_dsn")}
    container = Container(Config.load({"session": {"adapter": adapter, "options": options}}, {}))
    try:
        store = container.session()
        draws: list[int] = []

        def pinned() -> str:
            draws.append(1)
            return STUCK_ID

        monkeypatch.setattr(base, "new_session_id", pinned)
        assert store.create({"first": 1}) == STUCK_ID
        outcome: list[BaseException] = []

        def second() -> None:
            try:
                store.create({"second": 2})
            except BaseException as exc:  # reported below
                outcome.append(exc)

        worker = threading.Thread(target=second, daemon=True)
        worker.start()
        worker.join(10)  # bounded: on the landed code this thread never returned
        assert not worker.is_alive()
        (error,) = outcome
        assert isinstance(error, ServiceUnavailableError)
        assert STUCK_ID not in str(error)
        assert len(draws) == 1 + base.CREATE_ATTEMPTS
        assert store.get(STUCK_ID) == {"first": 1}  # the existing session is untouched
        store.delete(STUCK_ID)
    finally:
        container.close()

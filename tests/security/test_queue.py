"""The db queue: message ids that are not plain ASCII digits name no message (issue 12 #10).

``str.isdigit`` is true for ``"²"`` (``int`` then raises ``ValueError``) and ``int``
reads ``"\u0661"`` (ARABIC-INDIC DIGIT ONE) as 1, so ids from an API or an admin form
crashed ``requeue_dead`` / ``purge_dead`` or acted on another message.
"""

from __future__ import annotations

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.queue import Message

from ..batteries.queue.conftest import clear_queue_tables

#: Ids that str.isdigit or int() accept but that are not the ASCII digits of an id.
FORGED_IDS = ["²", "\u0661", "\uff11", " 1", "1 ", "+1", "1_0", "1\n", "99999999999999999999"]


@pytest.fixture(params=["sqlite", "postgres"])
def queue(request):
    if request.param == "sqlite":
        dsn = request.getfixturevalue("sqlite_dsn")
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        clear_queue_tables(dsn)
        request.addfinalizer(lambda: clear_queue_tables(dsn))
    container = Container(Config.load({"queue": {"adapter": "db", "options": {"dsn": dsn}}}, {}))
    yield container.queue()
    container.close()


def _dead_one(queue) -> Message:
    queue.push("t", b"x")
    message = queue.pop("t", timeout=0)
    assert queue.dead(message, "failed")
    return message


def test_db_queue_dead_list_ids_that_are_not_ascii_digits_match_nothing(queue):
    dead = _dead_one(queue)
    assert dead.id.isascii() and dead.id.isdigit()
    assert queue.requeue_dead("t", FORGED_IDS) == 0  # "²" raised ValueError here
    assert queue.purge_dead("t", FORGED_IDS) == 0
    assert [m.id for m in queue.dead_messages("t")] == [dead.id]
    assert queue.requeue_dead("t", [dead.id]) == 1


def test_db_queue_ack_with_a_forged_unicode_id_settles_nothing(queue):
    queue.push("t", b"x")
    message = queue.pop("t", timeout=0)
    for forged_id in FORGED_IDS:
        forged = Message(
            forged_id, message.topic, message.body, message.attempts, message.enqueued_at
        )
        assert queue.ack(forged) is False
        assert queue.nack(forged) is False
        assert queue.dead(forged, "x") is False
    assert queue.ack(message)

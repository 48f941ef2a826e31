"""Admin tests: the test project's URLs with the admin mounted, and a real queue on ``default``.

The queue is the ``db`` adapter on Django's ``default`` alias (the test database the
admin reads), so rows are made by ``push`` and ``dead`` exactly as in production.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest


@pytest.fixture(autouse=True)
def _admin_urls(settings):
    settings.ROOT_URLCONF = "tests.admin.urls"


@pytest.fixture
def queue():
    """Return a db queue writing to Django's ``default`` database."""
    from toolkit_batteries.db import Database
    from toolkit_batteries.queue.adapters.db import DBQueue

    opened = DBQueue(Database("default"), SimpleNamespace())
    yield opened
    opened.close()


def dead_letter(queue, topic: str, body: bytes, reason: str) -> str:
    """Push ``body``, deliver it and move it to the dead list; return its id."""
    queue.push(topic, body)
    message = queue.pop(topic, timeout=0)
    assert message is not None and queue.dead(message, reason)
    return message.id

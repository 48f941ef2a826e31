"""Admin pages of the outbox tables, and the tables' contract with ``migrate``.

The admin test writes with a ``db`` outbox on Django's ``default`` alias (the test
database the admin reads), so rows come from ``publish`` and the relay as in production.
"""

from __future__ import annotations

import pytest

from tests.support.batteries import empty_sqlite, refused_without_tables
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.outbox.base import Settings
from toolkit_batteries.outbox.models import OutboxMessage

PAGE = "/admin/toolkit_outbox/outboxmessage/"
INBOX = "/admin/toolkit_outbox/inboxmessage/"


@pytest.fixture
def outbox(settings):
    from toolkit_batteries.db import Database
    from toolkit_batteries.outbox.adapters.db import DBOutbox

    settings.ROOT_URLCONF = "tests.admin.urls"
    opened = DBOutbox(Database("default"), Settings(max_attempts=1))
    yield opened
    opened.close()


def _fail(record):
    raise ConnectionError("broker down")


def test_messages_page_lists_states_errors_and_a_short_preview(admin_client, outbox):
    outbox.publish("orders", b'{"note": "' + b"x" * 300 + b'TAIL-NEVER-SHOWN"}')
    outbox.publish("emails", b"sent one")
    outbox.relay(_fail, batch_size=1).run_once()
    outbox.relay(lambda record: None).run_once()
    outbox.inbox("billing").seen("m-1")
    page = admin_client.get(PAGE).content.decode()
    assert "orders" in page and "emails" in page and "ConnectionError: broker down" in page
    dead = admin_client.get(PAGE, {"status__exact": "dead"}).context["cl"]
    assert [row.topic for row in dead.result_list] == ["orders"]
    row = OutboxMessage.objects.get(topic="orders")
    detail = admin_client.get(f"{PAGE}{row.pk}/change/").content.decode()
    assert "{&quot;note&quot;: &quot;xxx" in detail and "TAIL-NEVER-SHOWN" not in detail
    assert "m-1" in admin_client.get(INBOX).content.decode()


def test_requeue_action_sends_dead_messages_back(admin_client, outbox):
    outbox.publish("orders", b"retry me")
    outbox.relay(_fail).run_once()
    row = OutboxMessage.objects.get()
    assert row.status == "dead"
    response = admin_client.post(
        PAGE, {"action": "requeue", "_selected_action": [row.pk]}, follow=True
    )
    assert "Requeued 1 dead message(s)." in response.content.decode()
    got = []
    assert outbox.relay(got.append).run_once().sent == 1
    assert got[0].payload == b"retry me" and got[0].attempts == 1


def test_opening_without_migrated_tables_names_migrate_and_runs_no_ddl(tmp_path):
    path = empty_sqlite(tmp_path, "empty.db")
    environ = {"OUTBOX__DEFAULT__DSN": str(path)}
    container = Container(Config.load({"outbox": {"adapter": "db"}}, environ))
    assert str(path) not in refused_without_tables(container, "outbox", path)

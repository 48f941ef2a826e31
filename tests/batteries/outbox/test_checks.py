"""``manage.py check`` for the outbox: one ID per problem, values never in the message."""

from __future__ import annotations

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config


def ids(block: dict) -> list[str]:
    return [message.id for message in service_checks("outbox", Config.load({"outbox": block}, {}))]


def test_a_valid_configuration_has_no_findings():
    assert ids({"adapter": "db", "options": {"publisher": "queue"}}) == []
    assert ids({"adapter": "memory"}) == []


def test_each_problem_has_its_id():
    assert ids({"adapter": "db", "options": {"batch_size": -1}}) == ["toolkit_outbox.E002"]
    assert ids({"adapter": "db", "options": {"notify_channel": "bad channel"}}) == [
        "toolkit_outbox.E002"
    ]
    assert ids({"adapter": "db", "options": {"table": "orders"}}) == ["toolkit_outbox.E003"]
    assert ids({"adapter": "db", "options": {"dsn": "mysql://x/y"}}) == ["toolkit_outbox.E004"]
    assert ids({"adapter": "cdc", "options": {"slot": "no-dash"}}) == ["toolkit_outbox.E005"]


def test_messages_name_the_field_never_the_value():
    block = {"adapter": "db", "options": {"dsn": "mysql://user:hunter2@x/y", "table": "t9"}}
    found = service_checks("outbox", Config.load({"outbox": block}, {}))
    text = " ".join(str(message.msg) for message in found)
    assert "hunter2" not in text and "t9" not in text
    assert '"table"' in text or "table" in text

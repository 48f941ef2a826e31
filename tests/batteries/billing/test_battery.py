"""The billing battery's state machine, checks, table, admin and SDK-free import."""

from __future__ import annotations

import sqlite3

import pytest

from tests.support.processes import python_prints
from toolkit_batteries.billing.states import (
    TERMINAL,
    TRANSITIONS,
    IllegalTransitionError,
    SubscriptionStatus,
    can_transition,
    check_transition,
    parse_status,
)
from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.db import MissingTablesError

S = SubscriptionStatus


def ids(options: dict, adapter: str = "billing_a") -> list[str]:
    toolkit = {"billing": {"adapter": adapter, "options": options}}
    return sorted(message.id for message in service_checks("billing", Config.load(toolkit, {})))


# ------------------------------------------------------------------ state machine


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (S.INCOMPLETE, S.ACTIVE),
        (S.INCOMPLETE, S.TRIALING),
        (S.TRIALING, S.ACTIVE),
        (S.ACTIVE, S.PAST_DUE),
        (S.PAST_DUE, S.ACTIVE),
        (S.PAST_DUE, S.UNPAID),
        (S.ACTIVE, S.PAUSED),
        (S.PAUSED, S.ACTIVE),
        (S.ACTIVE, S.CANCELED),
        (S.CANCELED, S.CANCELED),
    ],
)
def test_allowed_transitions(current, target):
    assert can_transition(current, target)
    check_transition(current, target)


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (S.CANCELED, S.ACTIVE),
        (S.CANCELED, S.TRIALING),
        (S.INCOMPLETE_EXPIRED, S.ACTIVE),
        (S.ACTIVE, S.INCOMPLETE),
        (S.ACTIVE, S.TRIALING),
        (S.PAST_DUE, S.TRIALING),
        (S.INCOMPLETE, S.PAST_DUE),
    ],
)
def test_illegal_transitions(current, target):
    assert not can_transition(current, target)
    with pytest.raises(IllegalTransitionError) as info:
        check_transition(current, target, instance="main")
    assert str(info.value) == (
        f"billing.main: a subscription cannot go from {current.value} to {target.value}"
    )
    assert info.value.code == "failed_precondition"


def test_terminal_statuses_and_every_status_has_a_row():
    assert set(TERMINAL) == {S.CANCELED, S.INCOMPLETE_EXPIRED}
    assert set(TRANSITIONS) == set(S)
    assert all(S.CANCELED in TRANSITIONS[s] for s in S if s not in TERMINAL)


def test_parse_status():
    assert parse_status(" Active ") is S.ACTIVE
    with pytest.raises(ValueError):
        parse_status("refunded")


# ------------------------------------------------------------------ checks


def test_a_complete_provider_configuration_passes():
    assert ids({"secret_key": "sk_test_x", "webhook_secret": "whsec_x"}) == []
    assert ids({}, adapter="stub") == []


def test_a_missing_key_and_webhook_secret():
    assert ids({}) == ["toolkit_billing.E002", "toolkit_billing.W001"]
    assert ids({}, adapter="billing_b") == ["toolkit_billing.E002", "toolkit_billing.W001"]
    assert ids({"api_key": "k", "webhook_secret": "w"}, adapter="paddle") == []


@pytest.mark.parametrize(
    "endpoint",
    ["http://api.example.com", "https://127.0.0.1", "https://u:p@api.example.com", "ftp://x"],
)
def test_a_bad_endpoint(endpoint):
    found = ids({"secret_key": "sk_test_x", "webhook_secret": "w", "endpoint": endpoint})
    assert found == ["toolkit_billing.E003"]


def test_the_outbound_rules_can_be_lifted():
    options = {"secret_key": "sk_test_x", "webhook_secret": "w"}
    options.update(endpoint="http://127.0.0.1:9", allow_insecure=True, allow_private=True)
    assert ids(options) == []


def test_non_positive_webhook_limits():
    base = {"secret_key": "sk_test_x", "webhook_secret": "w"}
    assert ids({**base, "webhook_tolerance": "-5s"}) == ["toolkit_billing.E004"]
    assert ids({**base, "max_webhook_bytes": -1}) == ["toolkit_billing.E004"]
    assert ids({**base, "webhook_tolerance": "0s"}) == []  # zero means unset: 5 minutes


def test_check_messages_name_no_value():
    toolkit = {"billing": {"adapter": "stripe", "options": {"endpoint": "http://sk_secret_host"}}}
    text = " ".join(m.msg for m in service_checks("billing", Config.load(toolkit, {})))
    assert "sk_secret_host" not in text and "billing.default" in text


# ------------------------------------------------------------------ table and admin


def test_opening_on_a_database_without_the_table_fails_and_creates_nothing(tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    toolkit = {"db": {"adapter": "sqlfile", "options": {"dsn": str(path)}}, "billing": {}}
    container = Container(Config.load(toolkit, {}))
    try:
        with pytest.raises(MissingTablesError) as info:
            container.billing()
        assert "manage.py migrate" in str(info.value)
    finally:
        container.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def test_the_admin_lists_and_never_edits():
    from django.contrib import admin

    from toolkit_batteries.billing.models import BillingSubscription

    page = admin.site._registry[BillingSubscription]
    assert page.has_add_permission(None) is False
    assert page.has_change_permission(None) is False
    assert "provider_id" in page.list_display and "status" in page.list_filter
    row = BillingSubscription(
        instance="default",
        provider_id="sub_1",
        status="active",
        current_period_end=86400.0,
        created_at=0.0,
        updated_at=0.0,
    )
    assert page.period_end(row) == "1970-01-02 00:00:00 UTC" and page.created(row) == "-"
    names = {f.name for f in BillingSubscription._meta.fields}
    assert not {n for n in names if "secret" in n or "key" in n}
    assert repr(row) == "<BillingSubscription default:sub_1 active>"


def test_importing_the_battery_imports_no_sdk():
    code = (
        "import os, sys; os.environ['DJANGO_SETTINGS_MODULE'] = 'tests.settings';"
        "import toolkit_batteries.billing, toolkit_batteries.billing.views,"
        " toolkit_batteries.billing.options, toolkit_batteries.billing.adapters.stub;"
        "print(sorted(m for m in ('stripe', 'paddle_billing') if m in sys.modules))"
    )
    assert python_prints(code) == "[]"

"""The ``db`` adapter on Django's connections: the caller's transactions, the admin page.

Both dialects are real: a fresh migrated SQLite file and the session's migrated database
on the PostgreSQL server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.db import transaction
from django.http import JsonResponse
from django.test import RequestFactory, override_settings

from toolkit_batteries import services
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.idempotency import ReservationState
from toolkit_batteries.idempotency.decorators import idempotent
from toolkit_batteries.idempotency.models import IdempotencyRecord

from ..cache.helpers import unique

DSNS = ["sqlite_dsn", "postgres_dsn"]


class Boom(Exception):
    """The caller's work failed after the record was written."""


@pytest.fixture(params=DSNS)
def store(request) -> Iterator:
    """Open a ``db`` store under a unique instance on a migrated database."""
    dsn = request.getfixturevalue(request.param)
    instance = unique()
    container = Container(
        Config.load({"idempotency": {instance: {"adapter": "db", "options": {"dsn": dsn}}}}, {})
    )
    opened = container.idempotency(instance)
    try:
        yield opened
    finally:
        opened._rows.delete()
        container.close()


def test_a_record_written_in_a_transaction_that_raises_is_gone(store):
    with pytest.raises(Boom), transaction.atomic(using=store.database.alias):
        reservation = store.reserve("order-1", fingerprint="fp")
        assert reservation.commit({"id": 1}) is True
        assert store.get("order-1").state is ReservationState.COMPLETED  # seen inside
        raise Boom
    assert store.get("order-1") is None
    assert store.reserve("order-1").state is ReservationState.NEW  # a retry runs again


def test_a_record_written_in_a_committed_transaction_stays(store):
    with transaction.atomic(using=store.database.alias):
        store.reserve("order-2").commit({"id": 2})
    found = store.get("order-2")
    assert found.state is ReservationState.COMPLETED and found.response == {"id": 2}


def test_a_savepoint_that_raises_drops_only_its_own_record(store):
    with transaction.atomic(using=store.database.alias):
        store.reserve("kept").commit(b"1")
        with pytest.raises(Boom), transaction.atomic(using=store.database.alias):
            store.reserve("dropped").commit(b"2")
            raise Boom
    assert store.get("kept").response == b"1" and store.get("dropped") is None


@pytest.mark.parametrize("dsn_fixture", DSNS)
def test_http_records_replay_and_the_admin_never_shows_their_bodies(request, dsn_fixture):
    from django.contrib.admin import AdminSite

    from toolkit_batteries.idempotency.admin import IdempotencyRecordAdmin

    dsn = request.getfixturevalue(dsn_fixture)
    instance = unique()
    toolkit = {
        "idempotency": {instance: {"adapter": "db", "options": {"dsn": dsn}}},
        "auth": {"adapter": "jwt", "options": {"jwt": {"secret": "s" * 40}}},
    }
    calls = []

    @idempotent(instance=instance)
    def create(request):
        calls.append(1)
        return JsonResponse({"card": "4111-secret"}, status=201)

    def post():
        token = services.auth().issue("user-1").token
        return RequestFactory().post(
            "/orders",
            b"{}",
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY="order-key-7",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )

    with override_settings(TOOLKIT=toolkit):
        store = services.idempotency(instance)
        try:
            assert create(post()).status_code == 201
            replay = create(post())
            assert replay["Idempotent-Replayed"] == "true" and len(calls) == 1
            assert json.loads(replay.content) == {"card": "4111-secret"}

            page = IdempotencyRecordAdmin(IdempotencyRecord, AdminSite())
            assert page.check() == []
            http = RequestFactory().get("/admin/")
            (row,) = page.get_queryset(http).using(store.database.alias).filter(instance=instance)
            cells = {
                name: str(getattr(page, name)(row))
                for name in page.list_display
                if callable(getattr(page, name, None))
            }
            cells["instance"], cells["state"] = row.instance, row.state
            shown = " ".join(cells.values()) + repr(row) + str(row)
            assert cells["client_key"] == "order-key-7"
            assert len(cells["scope_hash"]) == 32 and cells["scope_hash"] in row.key
            assert cells["http_status"] == "201" and cells["state"] == "completed"
            assert int(cells["response_size"]) == len(bytes(row.response))
            assert "4111" not in shown and row.token not in shown + "".join(page.fields)
            assert "response" not in page.fields and "token" not in page.fields
            assert page.has_add_permission(http) is False
            assert page.has_change_permission(http, row) is False
        finally:
            store._rows.delete()

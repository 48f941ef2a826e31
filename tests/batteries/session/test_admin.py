"""The sessions admin page lists sessions and never shows an id or the data."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.test import RequestFactory

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.session.models import SessionRecord


def test_the_admin_lists_sessions_without_their_ids_or_data(sqlite_dsn):
    from django.contrib.admin import AdminSite

    from toolkit_batteries.session.admin import SessionRecordAdmin

    settings = {"session": {"adapter": "db", "options": {"dsn": sqlite_dsn}}}
    container = Container(Config.load(settings, {}))
    try:
        store = container.session()
        secret = f"card-{uuid.uuid4().hex}"  # no digits of a timestamp or an id can match
        sid = store.create({"card": secret}, ttl=timedelta(minutes=5))
        page = SessionRecordAdmin(SessionRecord, AdminSite())
        request = RequestFactory().get("/admin/")
        (row,) = page.get_queryset(request).using(store.database.alias)
        cells = [
            str(getattr(page, name)(row) if callable(getattr(page, name, None)) else "")
            for name in page.list_display
        ]
        shown = " ".join(cells) + repr(row) + str(row)
        assert sid not in shown and sid[:8] not in shown
        assert secret not in shown and secret[:13] not in shown
        assert page.live(row) is True
        assert page.size(row) == len(f'{{"card":"{secret}"}}')
        assert page.has_add_permission(request) is False
        assert page.has_change_permission(request, row) is False
        assert "data" not in page.fields and "id" not in page.fields
    finally:
        container.close()

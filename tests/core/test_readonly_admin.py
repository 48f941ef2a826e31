"""Battery admin pages built on ``ReadOnlyAdmin``: never add or edit; delete as declared.

A superuser holds every permission Django knows, so what these pages refuse them is what
the page itself refuses: adding and editing always, deleting where the page declares
``deletable = False`` (a bare row delete would skip the battery's own bookkeeping).
"""

from __future__ import annotations

import pytest
from django.contrib.admin import AdminSite
from django.contrib.auth.models import AnonymousUser, User
from django.test import RequestFactory

from toolkit_batteries.scheduler.admin import SchedulerClaimAdmin
from toolkit_batteries.scheduler.models import SchedulerClaim
from toolkit_batteries.search.admin import SearchDocumentAdmin
from toolkit_batteries.search.models import SearchDocument
from toolkit_batteries.session.admin import SessionRecordAdmin
from toolkit_batteries.session.models import SessionRecord
from toolkit_batteries.vectorstore.admin import StoredVectorAdmin
from toolkit_batteries.vectorstore.models import StoredVector

PAGES = [
    (StoredVectorAdmin, StoredVector, False),
    (SchedulerClaimAdmin, SchedulerClaim, False),
    (SearchDocumentAdmin, SearchDocument, True),
    (SessionRecordAdmin, SessionRecord, True),
]


def _request(*, superuser: bool):
    """Return a request by a superuser, or by an anonymous user, who holds no permission."""
    request = RequestFactory().get("/admin/")
    request.user = (
        User(username="admin", is_active=True, is_superuser=True) if superuser else AnonymousUser()
    )
    return request


@pytest.mark.parametrize(("page_class", "model", "deletable"), PAGES)
def test_no_add_or_edit_and_delete_only_where_declared(page_class, model, deletable):
    page = page_class(model, AdminSite())
    request = _request(superuser=True)
    assert page.has_add_permission(request) is False
    assert page.has_change_permission(request, model()) is False
    assert page.has_delete_permission(request, model()) is deletable
    assert page.list_per_page == 100


@pytest.mark.parametrize(("page_class", "model", "deletable"), PAGES)
def test_a_declared_deletable_page_still_asks_django(page_class, model, deletable):
    """``deletable`` only narrows: a user without the delete permission is refused anyway."""
    page = page_class(model, AdminSite())
    assert page.has_delete_permission(_request(superuser=False), model()) is False

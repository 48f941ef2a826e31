"""The search documents' admin page: listed and filtered, never added or edited by hand."""

from __future__ import annotations

import pytest

from toolkit_batteries.db import Database
from toolkit_batteries.search.adapters.db import DBSearch

DOCUMENTS = "/admin/toolkit_search/searchdocument/"


@pytest.fixture(autouse=True)
def _admin_urls(settings):
    settings.ROOT_URLCONF = "tests.admin.urls"


@pytest.fixture
def search():
    opened = DBSearch(Database("default"), instance="admin")
    yield opened
    opened.close()


def test_documents_are_listed_and_read_only(admin_client, search):
    search.index("articles", "moon-42", {"body": "lunar module"}, filters={"lang": "en"})
    page = admin_client.get(DOCUMENTS).content.decode()
    assert "moon-42" in page and "articles" in page
    assert "moon-42" not in admin_client.get(DOCUMENTS, {"index_name": "other"}).content.decode()
    assert admin_client.get(DOCUMENTS + "add/").status_code == 403
    pk = search._rows.get(doc_id="moon-42").pk
    detail = admin_client.get(f"{DOCUMENTS}{pk}/change/")
    assert detail.status_code == 200
    assert 'name="body"' not in detail.content.decode()  # no editable field


def test_deleting_in_the_admin_removes_it_from_search(admin_client, search):
    search.index("articles", "gone", {"body": "ephemeral words"})
    pk = search._rows.get(doc_id="gone").pk
    response = admin_client.post(f"{DOCUMENTS}{pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert search.query("articles", "ephemeral").doc_ids == []

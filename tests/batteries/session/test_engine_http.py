"""The session engine behind ``SessionMiddleware``: a real admin login on every adapter.

The admin's login form authenticates a real user, ``django.contrib.auth.login()`` cycles
the key and writes the session through ``toolkit_batteries.session.engine``, and the
record lands in the store ``services.session()`` returns; deleting it there logs the
browser out, and a session deleted while a request was using it ends that request with
Django's ``SessionInterrupted``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.exceptions import SessionInterrupted
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings

from toolkit_batteries import services
from toolkit_batteries.session.engine import FIELD, SessionStore

from .conftest import VARIANTS, settings_for

ENGINE = "toolkit_batteries.session.engine"


@pytest.fixture(params=VARIANTS)
def variant(request, tmp_path) -> Iterator[str]:
    toolkit, _ = settings_for(request.param, request, tmp_path)
    with override_settings(TOOLKIT=toolkit, SESSION_ENGINE=ENGINE, ROOT_URLCONF="tests.admin.urls"):
        try:
            yield request.param
        finally:
            services.reset()


@pytest.fixture
def superuser() -> Iterator[User]:
    """Yield a real superuser in Django's own database; delete it afterwards.

    Not ``pytest.mark.django_db``: its test case forbids every database alias it does not
    name, and the ``db`` variant's session store lives under an alias registered for its
    ``dsn`` (which exists at that moment or not, depending on which test ran first).
    """
    user = User.objects.create_superuser("root", "root@example.com", "a long passphrase 42")
    try:
        yield user
    finally:
        user.delete()


def test_an_admin_login_lives_in_the_toolkit_store_and_ends_there(variant, superuser):
    client = Client()
    page = client.post(
        "/admin/login/?next=/admin/",
        {"username": "root", "password": "a long passphrase 42", "next": "/admin/"},
    )
    assert page.status_code == 302 and page["Location"] == "/admin/"
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    record = services.session().get(key)
    assert set(record) == {FIELD}
    assert SessionStore(key)["_auth_user_id"] == str(User.objects.get(username="root").pk)
    assert client.get("/admin/").status_code == 200

    services.session().delete(key)  # ended in the store: the browser is logged out
    assert client.get("/admin/").status_code == 302

    client.post("/admin/login/", {"username": "root", "password": "a long passphrase 42"})
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert services.session().exists(key)
    client.post("/admin/logout/")
    assert not services.session().exists(key)


def test_a_session_deleted_during_the_request_raises_session_interrupted(variant):
    session = SessionStore()
    session["step"] = 1
    session.save()
    key = session.session_key

    def view(request):
        request.session["step"] = 2  # modified, so the middleware saves it...
        services.session().delete(key)  # ...but another request logged out meanwhile
        return HttpResponse("ok")

    request = RequestFactory().get("/")
    request.COOKIES[settings.SESSION_COOKIE_NAME] = key
    with pytest.raises(SessionInterrupted):
        SessionMiddleware(view)(request)
    assert not services.session().exists(key)  # and it was not resurrected

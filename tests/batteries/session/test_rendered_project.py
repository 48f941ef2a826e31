"""A rendered project keeps request.session, the admin login and services.session() in one store.

The project template is rendered with ``django-admin startproject``; then, in a fresh
interpreter per adapter, only the environment changes (``SESSION__DEFAULT__ADAPTER`` =
``memory``, ``kvserver`` on the real Redis, ``db`` on the project's SQLite file): a real
superuser logs into the admin, the session cookie's key is found in
``services.session()``, a session past its expiry is purged by ``manage.py
clearsessions``, and deleting the record from the store logs the browser out.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.subprocesses import run_python_json
from tests.test_template import _clean_env, render

CHILD = r"""
import json
from datetime import timedelta

import django
django.setup()
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from toolkit_batteries import services
from toolkit_batteries.session.engine import SessionStore

store = services.session()
name = "root-" + store.adapter_name
User.objects.filter(username=name).delete()
User.objects.create_superuser(name, "root@example.com", "a long passphrase 42")
client = Client(HTTP_HOST="localhost")
page = client.post("/admin/login/", {"username": name, "password": "a long passphrase 42",
                                     "next": "/admin/"})
key = client.cookies[settings.SESSION_COOKIE_NAME].value
logged_in = client.get("/admin/").status_code
record = services.session().get(key)

old = SessionStore()
old["x"] = 1
old.set_expiry(60)
old.save()
if store.adapter_name != "kvserver":
    store.clock = lambda: timezone.now().timestamp() + 120   # the old one has expired
call_command("clearsessions")
if store.adapter_name == "memory":
    held = int(old.session_key in store._entries)
elif store.adapter_name == "db":
    held = store._rows.filter(id=old.session_key).count()
else:
    held = None
store.clock = lambda: timezone.now().timestamp()

services.session().delete(key)
after_delete = client.get("/admin/").status_code
print(json.dumps({
    "engine": settings.SESSION_ENGINE,
    "adapter": store.adapter_name,
    "login": page.status_code,
    "logged_in": logged_in,
    "record": sorted(record) if record else None,
    "expired_held_after_clearsessions": held,
    "after_delete": after_delete,
}))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = render(tmp_path_factory.mktemp("sessions") / "proj")
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=target,
        env=_clean_env() | {"TOOLKIT_ENV": "dev"},
        capture_output=True,
        text=True,
        timeout=300,  # every battery's migrations, on a loaded machine
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return target


@pytest.mark.parametrize("adapter", ["memory", "kvserver", "db"])
def test_the_environment_alone_moves_django_sessions_and_services_session(
    adapter, project, request
):
    env = _clean_env() | {
        "TOOLKIT_ENV": "dev",
        "DJANGO_SETTINGS_MODULE": "tkproj.settings",
        "SESSION__DEFAULT__ADAPTER": adapter,
    }
    if adapter == "kvserver":
        env["SESSION__DEFAULT__KVSERVER_ADDR"] = request.getfixturevalue("redis_url")
        env["SESSION__DEFAULT__KVSERVER_PREFIX"] = f"t-render-{uuid.uuid4().hex}:"
    found = run_python_json(CHILD, cwd=project, env=env, timeout=120)
    assert found["engine"] == "toolkit_batteries.session.engine"
    assert found["adapter"] == adapter
    assert found["login"] == 302 and found["logged_in"] == 200
    assert found["record"] == ["django_session"]
    if adapter != "kvserver":  # the server expires keys itself; clearsessions is a no-op
        assert found["expired_held_after_clearsessions"] == 0
    assert found["after_delete"] == 302  # ended in the store: logged out

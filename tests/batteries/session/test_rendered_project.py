"""A rendered project keeps request.session, the admin login and services.session() in one store.

The project template is rendered with ``django-admin startproject``; then, in a fresh
interpreter per adapter, only the environment changes (``SESSION__DEFAULT__ADAPTER`` =
``memory``, ``kvserver`` on the real Redis, ``db`` on the project's SQLite file): a real
superuser logs into the admin, the session cookie's key is found in
``services.session()`` (and never in ``django.contrib.sessions``' own table), a session
past its expiry is purged by ``manage.py clearsessions``, and deleting the record from the
store logs the browser out. With the one variable ``TOOLKIT_REDIS_URL``, the same project
runs its cache on django-redis and its sessions, cache and locks on one connection pool.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.subprocesses import run_python_json
from tests.test_template import _clean_env, render_migrated

#: Both children: a superuser ``name`` logs in through the admin; ``key`` is its session.
ADMIN_LOGIN = """\
User.objects.filter(username=name).delete()
User.objects.create_superuser(name, "root@example.com", "a long passphrase 42")
client = Client(HTTP_HOST="localhost")
page = client.post("/admin/login/", {"username": name, "password": "a long passphrase 42",
                                     "next": "/admin/"})
key = client.cookies[settings.SESSION_COOKIE_NAME].value
"""

CHILD = (
    r"""
import json
from datetime import timedelta

import django
django.setup()
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from toolkit_batteries import services
from toolkit_batteries.session.engine import SessionStore

store = services.session()
name = "root-" + store.adapter_name
"""
    + ADMIN_LOGIN
    + r"""logged_in = client.get("/admin/").status_code
record = services.session().get(key)

old = SessionStore()
old["x"] = 1
old.set_expiry(60)
old.save()
def held_now():
    if store.adapter_name == "memory":
        return int(old.session_key in store._entries)
    if store.adapter_name == "db":
        return store._rows.filter(id=old.session_key).count()
    return store.client.pttl(store.key(old.session_key))  # the server's own expiry, in ms
held_before = held_now()
if store.adapter_name != "kvserver":
    store.clock = lambda: timezone.now().timestamp() + 120   # the old one has expired
call_command("clearsessions")
held = held_now()
store.clock = lambda: timezone.now().timestamp()

services.session().delete(key)
after_delete = client.get("/admin/").status_code
print(json.dumps({
    "engine": settings.SESSION_ENGINE,
    "adapter": store.adapter_name,
    "login": page.status_code,
    "logged_in": logged_in,
    "record": sorted(record) if record else None,
    "django_table_rows": Session.objects.count(),
    "expired_held_before_clearsessions": held_before,
    "expired_held_after_clearsessions": held,
    "after_delete": after_delete,
}))
"""
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_migrated(tmp_path_factory.mktemp("sessions") / "proj")


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
    assert found["django_table_rows"] == 0  # one store: Django's own table stays empty
    if adapter == "kvserver":  # the server expires the key itself; clearsessions is a no-op
        assert 0 < found["expired_held_after_clearsessions"] <= 60_000
    else:
        assert found["expired_held_before_clearsessions"] == 1
        assert found["expired_held_after_clearsessions"] == 0
    assert found["after_delete"] == 302  # ended in the store: logged out


ONE_REDIS = (
    r"""
import json
import os

import django
django.setup()
import redis
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.cache import caches
from django.test import Client
from django_redis import get_redis_connection
from django_redis.cache import RedisCache

from toolkit_batteries import services

cache = caches["default"]
connection = get_redis_connection("default")
name = "root-one-redis"
"""
    + ADMIN_LOGIN
    + r"""lease = services.lock().acquire("rendered-one-pool", ttl=10)
cache.set("rendered-one-pool", 1, 10)
logged_in = client.get("/admin/").status_code
raw = redis.Redis.from_url(os.environ["TOOLKIT_REDIS_URL"])
mine = [c for c in raw.client_list() if c.get("name") == f"toolkit-{os.getpid()}"]
out = {
    "cache_is_django_redis": isinstance(cache, RedisCache),
    "cache_is_services_cache": services.cache() is cache,
    "ping": connection.ping(),
    "session_adapter": services.session().adapter_name,
    "session_client_is_the_connection": services.session().client is connection,
    "lock_client_is_the_connection": services.lock()._client is connection,
    "login": page.status_code,
    "logged_in": logged_in,
    "in_store": services.session().exists(key),
    "django_table_rows": Session.objects.count(),
    "connections": len(mine),
}
lease.release()
cache.delete("rendered-one-pool")
services.session().delete(key)
raw.close()
print(json.dumps(out))
"""
)


def test_one_redis_variable_puts_cache_sessions_and_locks_on_one_django_redis_pool(
    project, redis_url
):
    env = _clean_env() | {
        "TOOLKIT_ENV": "dev",
        "DJANGO_SETTINGS_MODULE": "tkproj.settings",
        "TOOLKIT_REDIS_URL": redis_url,
        "SESSION__DEFAULT__KVSERVER_PREFIX": f"t-render-{uuid.uuid4().hex}:",
    }
    found = run_python_json(ONE_REDIS, cwd=project, env=env, timeout=120)
    assert found == {
        "cache_is_django_redis": True,
        "cache_is_services_cache": True,
        "ping": True,
        "session_adapter": "kvserver",
        "session_client_is_the_connection": True,
        "lock_client_is_the_connection": True,
        "login": 302,
        "logged_in": 200,
        "in_store": True,
        "django_table_rows": 0,
        # The admin login, its session writes, the lock and the cache set, one after
        # another on one thread: one pool, one connection on the server.
        "connections": 1,
    }

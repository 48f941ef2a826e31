"""A rendered project moves to PostgreSQL and Redis with two variables, no code change.

``TOOLKIT_DATABASE_URL`` moves the ``db`` service (so the ORM and every SQL battery, the
template's job queue included); ``TOOLKIT_REDIS_URL`` is inherited by every ``kvserver``
instance that names no server of its own, and the template switches its cache, lock and
rate limits to ``kvserver`` when it is set. The test proves it on the real servers:
migrations land in a fresh PostgreSQL database, ``doctor --strict`` opens every service,
a login rate limit counted in one process is seen by another (Redis holds it), and
``config show`` says where each value came from and which of ``url``/``addr`` is used.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.databases import empty_postgres_database

from .conftest import base_env, render_project, run_toolkit


@pytest.fixture
def fresh_database(postgres_server_dsn: str) -> Iterator[str]:
    with empty_postgres_database(postgres_server_dsn, "toolkit_move") as url:
        yield url


def _shell(root: Path, env: dict[str, str], code: str) -> dict:
    run = [sys.executable, "manage.py", "shell", "-c", code]
    done = subprocess.run(run, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_two_variables_move_the_template_to_postgresql_and_redis(
    tmp_path: Path, fresh_database: str, redis_url: str
) -> None:
    root = render_project(tmp_path / "demo")
    move = {"TOOLKIT_DATABASE_URL": fresh_database, "TOOLKIT_REDIS_URL": redis_url}
    env = base_env(TOOLKIT_ENV="dev", **move)

    migrated = run_toolkit("db", "migrate", cwd=root, env=env)
    assert migrated.returncode == 0, migrated
    doctor = run_toolkit("--json", "doctor", "--strict", cwd=root, env=env)
    assert doctor.returncode == 0, doctor
    adapters = {
        (row["service"], row["instance"]): row["adapter"] for row in doctor.json["data"]["rows"]
    }
    assert adapters[("db", "default")] == "sqlserver"
    assert adapters[("queue", "default")] == "db"
    for kv in (("cache", "default"), ("ratelimit", "login"), ("ratelimit", "register")):
        assert adapters[kv] == "kvserver", kv

    # The ORM is on PostgreSQL, and the login limit is one count across processes.
    key = f"ann-{secrets.token_hex(4)}@example.com"
    spend = (
        "import json; from django.db import connection; from toolkit_batteries import services\n"
        f"d = [services.ratelimit('login').allow({key!r}).allowed for _ in range(5)]\n"
        "print(json.dumps({'vendor': connection.vendor, 'allowed': d}))"
    )
    assert _shell(root, env, spend) == {"vendor": "postgresql", "allowed": [True] * 5}
    # cost=0 only reports the bucket: a per-process limiter would show it full (5). The
    # bucket refills one token per 12 s, so the shared count shows fewer for a minute.
    probe = (
        "import json; from toolkit_batteries import services\n"
        f"d = services.ratelimit('login').allow({key!r}, cost=0)\n"
        "print(json.dumps({'remaining': d.remaining}))"
    )
    assert _shell(root, env, probe)["remaining"] < 5  # the other process's count

    shown = run_toolkit("--json", "config", "show", cwd=root, env=env)
    assert shown.returncode == 0, shown
    data = shown.json["data"]
    assert data["db"]["default"]["sources"]["@adapter"] == "TOOLKIT_DATABASE_URL"
    assert data["cache"]["default"]["sources"]["addr"] == "TOOLKIT_REDIS_URL"
    assert data["cache"]["default"]["uses"] == "addr"
    login = data["ratelimit"]["login"]
    assert login["sources"]["kvserver.addr"] == "TOOLKIT_REDIS_URL"
    assert login["sources"]["burst"] == "settings.TOOLKIT"
    text = run_toolkit("config", "show", "--service", "db", "--service", "cache", cwd=root, env=env)
    lines = text.stdout.splitlines()
    assert "db (postgres)  [TOOLKIT_DATABASE_URL]" in lines, text.stdout
    assert f"  addr: {redis_url}  [TOOLKIT_REDIS_URL; used]" in lines, text.stdout
    assert '  url: ""  [default; unused: addr is used]' in lines, text.stdout


def test_an_instance_that_names_its_own_server_keeps_it(tmp_path: Path, redis_url: str) -> None:
    root = render_project(tmp_path / "demo")
    env = base_env(
        TOOLKIT_ENV="dev",
        TOOLKIT_REDIS_URL=redis_url,
        CACHE__DEFAULT__URL="redis://127.0.0.1:6379/14",
        TOOLKIT_DATABASE_URL="mysql://someone:hunter2-secret@db/app",
    )
    shown = run_toolkit("--json", "config", "show", cwd=root, env=env)
    # A scheme the toolkit cannot serve is refused, naming the variable and not the value.
    assert shown.returncode == 3, shown
    assert "TOOLKIT_DATABASE_URL" in shown.json["error"]
    assert "hunter2-secret" not in shown.stdout + shown.stderr
    env.pop("TOOLKIT_DATABASE_URL")
    shown = run_toolkit("--json", "config", "show", "--service", "cache", cwd=root, env=env)
    cache = shown.json["data"]["cache"]["default"]
    assert cache["uses"] == "url"
    assert cache["sources"]["url"] == "CACHE__DEFAULT__URL"
    assert "addr" not in cache["sources"]  # not inherited: the instance names its server

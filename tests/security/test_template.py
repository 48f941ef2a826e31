"""Issue 12 defect 6: a project rendered from the template is deploy-safe.

On the landed template ``SECRET_KEY`` fell back to the ``django-insecure-`` key committed in
``settings.py`` outside development, no HTTPS setting could be turned on from the
environment (``check --deploy`` failed with six warnings), ``toolkit serve`` ran no system
check, and ``GET /`` told anyone the exact toolkit and Django versions. Each test renders a
fresh project with ``toolkit new`` and runs it in fresh interpreters, as an operator would.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import django
import pytest

import toolkit_batteries
from tests.cli.conftest import base_env, run_toolkit
from tests.ports import free_port
from tests.subprocesses import run_manage as manage
from tests.subprocesses import run_python_json

NAME = "deployable"

#: The production environment README.md's deploy section lists (values are examples).
PRODUCTION = {
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "api.example.com",
    "AUTH__DEFAULT__JWT_SECRET": secrets.token_urlsafe(48),
    # One web process, no worker: the template's memory ratelimit/session state is right
    # (toolkit_batteries.W020 otherwise; docs/deploy.md moves it for several processes).
    "WEB_CONCURRENCY": "1",
}


def production_env(**extra: str) -> dict[str, str]:
    """Return the documented production variables and nothing the test runner had."""
    env = {k: v for k, v in base_env().items() if not k.startswith("DJANGO_")}
    return env | PRODUCTION | extra


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deploy") / NAME
    ran = run_toolkit("new", NAME, "--dir", str(root))
    assert ran.returncode == 0, ran
    return root


def settings_of(project: Path, env: dict[str, str]) -> dict:
    code = (
        "import json, django\n"
        "from django.conf import settings as s\n"
        "django.setup()\n"
        "names = ['SECURE_SSL_REDIRECT', 'SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS',\n"
        "    'SECURE_HSTS_PRELOAD', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE',\n"
        "    'SECURE_PROXY_SSL_HEADER', 'DEBUG', 'SECRET_KEY']\n"
        "print(json.dumps({n: getattr(s, n) for n in names}))\n"
    )
    env = env | {"DJANGO_SETTINGS_MODULE": f"{NAME}.settings"}
    return run_python_json(code, cwd=project, env=env, timeout=60)


def test_fresh_project_passes_check_deploy_with_the_documented_production_variables(
    project: Path,
) -> None:
    done = manage(project, "check", "--deploy", "--fail-level", "WARNING", env=production_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout


def test_production_settings_refuse_to_load_without_a_secret_key(project: Path) -> None:
    env = {k: v for k, v in production_env().items() if k != "DJANGO_SECRET_KEY"}
    done = manage(project, "check", env=env)
    assert done.returncode != 0
    assert "DJANGO_SECRET_KEY is not set" in done.stderr
    assert "TOOLKIT_ENV=dev" in done.stderr  # the way out for development, named
    # The toolkit program says the same, as an invalid configuration (exit 3).
    ran = run_toolkit("doctor", cwd=project, env=env)
    assert ran.returncode == 3 and "DJANGO_SECRET_KEY is not set" in ran.stderr
    # Development (the explicit switch) still runs on the project's own development key.
    dev = settings_of(project, env | {"TOOLKIT_ENV": "development"})
    assert dev["SECRET_KEY"].startswith("django-insecure-")
    assert manage(project, "check", env=env | {"TOOLKIT_ENV": "dev"}).returncode == 0


def test_production_defaults_are_secure_and_each_is_settable_from_the_environment(
    project: Path,
) -> None:
    prod = settings_of(project, production_env())
    assert prod["SECRET_KEY"] == PRODUCTION["DJANGO_SECRET_KEY"] and prod["DEBUG"] is False
    assert prod["SECURE_SSL_REDIRECT"] is True
    assert prod["SECURE_HSTS_SECONDS"] >= 31_536_000
    assert prod["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert prod["SESSION_COOKIE_SECURE"] is True and prod["CSRF_COOKIE_SECURE"] is True
    assert prod["SECURE_PROXY_SSL_HEADER"] is None  # no header is trusted unless named
    assert prod["SECURE_HSTS_PRELOAD"] is False  # an opt-in commitment

    changed = settings_of(
        project,
        production_env(
            DJANGO_SECURE_SSL_REDIRECT="0",
            DJANGO_SECURE_HSTS_SECONDS="3600",
            DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS="false",
            DJANGO_SECURE_HSTS_PRELOAD="1",
            DJANGO_SESSION_COOKIE_SECURE="no",
            DJANGO_CSRF_COOKIE_SECURE="off",
            DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto: https",
        ),
    )
    assert changed["SECURE_SSL_REDIRECT"] is False and changed["SECURE_HSTS_SECONDS"] == 3600
    assert changed["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is False
    assert changed["SECURE_HSTS_PRELOAD"] is True
    assert changed["SESSION_COOKIE_SECURE"] is False and changed["CSRF_COOKIE_SECURE"] is False
    assert changed["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]

    # Development keeps plain HTTP working: no redirect, no HSTS, no secure-only cookies.
    dev = settings_of(project, production_env(TOOLKIT_ENV="dev"))
    assert dev["SECURE_SSL_REDIRECT"] is False and dev["SECURE_HSTS_SECONDS"] == 0
    assert dev["SESSION_COOKIE_SECURE"] is False and dev["CSRF_COOKIE_SECURE"] is False

    # A value that is not a yes/no or a number fails, naming the variable, never the value.
    bad = manage(project, "check", env=production_env(DJANGO_SECURE_SSL_REDIRECT="maybe"))
    assert bad.returncode != 0 and "DJANGO_SECURE_SSL_REDIRECT must be" in bad.stderr
    bad = manage(project, "check", env=production_env(DJANGO_SECURE_HSTS_SECONDS="1y"))
    assert bad.returncode != 0 and "DJANGO_SECURE_HSTS_SECONDS must be" in bad.stderr


def test_serve_runs_the_system_checks_and_refuses_the_development_key_outside_development(
    project: Path,
) -> None:
    # The development key handed over in the environment: refused before gunicorn starts.
    port = str(free_port())  # never bound: every start below is refused first
    dev_key = "django-insecure-" + secrets.token_urlsafe(40)
    ran = run_toolkit(
        "serve",
        "--port",
        port,
        cwd=project,
        env=production_env(DJANGO_SECRET_KEY=dev_key),
        timeout=60,
    )
    assert ran.returncode == 3, ran
    assert "refusing to serve outside development with the development SECRET_KEY" in ran.stderr
    assert dev_key not in ran.stdout + ran.stderr
    # No key at all: the settings refuse to load, and serve says why.
    no_key = {k: v for k, v in production_env().items() if k != "DJANGO_SECRET_KEY"}
    ran = run_toolkit("serve", "--port", port, cwd=project, env=no_key, timeout=60)
    assert ran.returncode == 3 and "DJANGO_SECRET_KEY is not set" in ran.stderr
    # A system check error refuses to start too (a JWT secret under 32 bytes: E002).
    ran = run_toolkit(
        "serve",
        "--port",
        port,
        cwd=project,
        env=production_env(AUTH__DEFAULT__JWT_SECRET="short"),
        timeout=60,
    )
    assert ran.returncode == 3 and "toolkit_auth.E002" in ran.stderr, ran
    assert "refusing to serve" in ran.stderr


def test_index_tells_anonymous_callers_no_versions(project: Path) -> None:
    code = (
        "import json, django\n"
        "django.setup()\n"
        "from django.test import Client\n"
        "response = Client().get('/', secure=True)\n"
        "print(json.dumps({'status': response.status_code, 'body': response.json(),\n"
        "    'server': response.headers.get('Server')}))\n"
    )
    env = production_env(
        DJANGO_SETTINGS_MODULE=f"{NAME}.settings", DJANGO_ALLOWED_HOSTS="testserver"
    )
    answer = run_python_json(code, cwd=project, env=env, timeout=60)
    assert answer["status"] == 200 and answer["body"]["project"] == NAME
    text = json.dumps(answer)
    assert "toolkit" not in answer["body"] and "django" not in answer["body"]
    assert toolkit_batteries.__version__ not in text and django.get_version() not in text

"""``project_template/``: it renders into a working project, and the demo serves it.

These run the real tools: ``django-admin startproject --template``, ``manage.py check``
in a fresh interpreter, and ``scripts/demo.sh`` in smoke mode with gunicorn on a free
loopback port. The reference application's routes are tested in
``tests/test_reference_app.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ports import free_port
from tests.subprocesses import run_manage, run_python_json

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "project_template"
BIN = Path(sys.executable).parent
NAME = "tkproj"

EXPECTED_FILES = {
    "manage.py",
    "README.md",
    f"{NAME}/__init__.py",
    f"{NAME}/settings.py",
    f"{NAME}/urls.py",
    f"{NAME}/wsgi.py",
    f"{NAME}/asgi.py",
    "api/__init__.py",
    "api/apps.py",
    "api/views.py",
    "api/handlers.py",
    "accounts/__init__.py",
    "accounts/apps.py",
    "accounts/models.py",
    "accounts/urls.py",
    "accounts/views.py",
    "accounts/migrations/__init__.py",
    "accounts/migrations/0001_initial.py",
    "accounts/migrations/0002_verified_at_avatar.py",
    "accounts/verification.py",
    "accounts/avatars.py",
    "schema/app.toolkit",
}

#: A JWT secret for the commands that need one (production mode has no fallback).
TEST_JWT_SECRET = "template-test-secret-0123456789abcdefghijklmnop"
#: The production SECRET_KEY of the children (production settings refuse to load without
#: one); a test of the development fallback sets ``DJANGO_SECRET_KEY=""``.
TEST_SECRET_KEY = "template-test-key-" + "k7Qz9" * 10

#: Configuration variables of the services the template uses; a child must not inherit
#: them from whoever runs the tests.
_TOOLKIT_PREFIXES = (
    "DB_",
    "LOG_",
    "AUTH_",
    "PASSWORD_",
    "RATELIMIT_",
    "SESSION_",
    "CRYPTO_",
    "MAILER_",
    "STORAGE_",
    "MEDIA_",
    "ACCOUNTS_",
)


def _clean_env() -> dict[str, str]:
    """Return the environment minus what would point a child at the test suite's settings."""
    # Django's settings set TZ for this process; the child has its own TIME_ZONE.
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "TZ")}
    for key in list(env):
        if key.startswith(_TOOLKIT_PREFIXES) or key == "TOOLKIT_ENV":
            del env[key]
    env["DJANGO_SECRET_KEY"] = TEST_SECRET_KEY
    # One web process: the template's memory state is right (toolkit_batteries.W020 when
    # the topology is not declared; docs/deploy.md).
    env["WEB_CONCURRENCY"] = "1"
    return env


def render(target: Path, name: str = NAME) -> Path:
    """Render the template as project ``name`` into ``target`` the way the demo does."""
    target.mkdir(parents=True)
    subprocess.run(
        [
            str(BIN / "django-admin"),
            "startproject",
            f"--template={TEMPLATE}",
            "--extension=py,toolkit,md",
            name,
            str(target),
        ],
        check=True,
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=60,
    )
    return target


def render_migrated(target: Path) -> Path:
    """Render the template into ``target`` and apply every migration (development env)."""
    render(target)
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


def manage(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``manage.py`` of ``project`` in a fresh interpreter."""
    return run_manage(project, *args, env=_clean_env() | env, timeout=60)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render(tmp_path_factory.mktemp("render") / "proj")


def test_renders_every_file_with_py_tpl_renamed(project: Path) -> None:
    files = {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()}
    assert files == EXPECTED_FILES


def test_rendered_files_hold_no_template_syntax(project: Path) -> None:
    for rel in EXPECTED_FILES:
        text = (project / rel).read_text()
        assert "{{" not in text and "{%" not in text, rel
        assert "project_name" not in text, rel
    assert f'ROOT_URLCONF = "{NAME}.urls"' in (project / NAME / "settings.py").read_text()


def test_each_render_gets_its_own_secret_key(project: Path, tmp_path: Path) -> None:
    pattern = re.compile(r'"(django-insecure-[^"]+)"')
    first = pattern.search((project / NAME / "settings.py").read_text())
    other = render(tmp_path / "other")
    second = pattern.search((other / NAME / "settings.py").read_text())
    assert first and second
    assert first.group(1) != second.group(1)


def test_schema_sample_declares_an_entity_and_a_service_with_http_bindings(
    project: Path,
) -> None:
    schema = (project / "schema" / "app.toolkit").read_text()
    assert re.search(r"^entity \w+ \{", schema, re.M)
    assert re.search(r"^service \w+ \{", schema, re.M)
    assert re.search(r'http: (GET|POST) "/v1/\w+', schema)
    assert f"The schema of {NAME}" in schema


def test_manage_py_check_passes(project: Path) -> None:
    result = manage(project, "check", AUTH__DEFAULT__JWT_SECRET=TEST_JWT_SECRET)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_manage_py_check_warns_when_production_has_no_jwt_secret(project: Path) -> None:
    result = manage(project, "check")
    assert result.returncode == 0, result.stderr
    assert "toolkit_auth.W001" in result.stderr
    assert manage(project, "check", DJANGO_DEBUG="1").stderr.count("toolkit_auth.W001") == 0


def test_migrations_match_the_models(project: Path) -> None:
    result = manage(project, "makemigrations", "--check", "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No changes detected" in result.stdout


def _run_in_project(project: Path, code: str, **env: str) -> object:
    """Run ``code`` in a fresh interpreter under the rendered settings; its printed JSON."""
    child_env = _clean_env() | {"DJANGO_SETTINGS_MODULE": f"{NAME}.settings"}
    child_env.pop("DJANGO_DEBUG", None)
    setup = "import json, django\ndjango.setup()\n"
    return run_python_json(setup + code, cwd=project, env=child_env | env)


def _settings_of(project: Path, **env: str) -> dict:
    """Load the rendered project's settings in a fresh interpreter and return a summary."""
    code = (
        "from django.conf import settings\n"
        "db = settings.DATABASES['default']\n"
        "print(json.dumps({'apps': settings.INSTALLED_APPS, 'toolkit': settings.TOOLKIT,\n"
        "    'engine': db['ENGINE'], 'name': str(db['NAME']), 'host': db.get('HOST', ''),\n"
        "    'debug': settings.DEBUG, 'hashers': settings.PASSWORD_HASHERS,\n"
        "    'middleware': settings.MIDDLEWARE, 'secret_key': settings.SECRET_KEY}))\n"
    )
    return _run_in_project(project, code, **env)


def test_settings_wire_the_toolkit_batteries(project: Path) -> None:
    info = _settings_of(project)
    assert {"toolkit_batteries", "toolkit_batteries.db", "toolkit_batteries.log"} <= set(
        info["apps"]
    )
    assert info["toolkit"]["db"]["adapter"] == "sqlfile"
    assert info["toolkit"]["log"]["adapter"] == "slog"
    assert info["engine"] == "django.db.backends.sqlite3"
    assert info["name"] == str(project / "db.sqlite3")
    assert info["debug"] is False


def test_settings_wire_the_reference_application(project: Path) -> None:
    info = _settings_of(project)
    apps = set(info["apps"])
    assert {"accounts", "toolkit_batteries.auth", "toolkit_batteries.password"} <= apps
    assert "toolkit_batteries.ratelimit" in apps
    assert info["middleware"][-1] == "toolkit_batteries.http.middleware.JsonErrorMiddleware"
    assert info["hashers"][0] == "toolkit_batteries.password.hashers.ToolkitArgon2PasswordHasher"
    login = info["toolkit"]["ratelimit"]["login"]
    assert login["adapter"] == "memory" and login["options"]["burst"] == 5


def _content_settings(project: Path, **env: str) -> dict:
    code = (
        "from django.conf import settings\n"
        "from django.core.files.storage import storages\n"
        "from toolkit_batteries import services\n"
        "print(json.dumps({'backend': settings.EMAIL_BACKEND,\n"
        "    'log_body': settings.EMAIL_LOG_BODY, 'from': settings.DEFAULT_FROM_EMAIL,\n"
        "    'storages': settings.STORAGES, 'media_root': settings.MEDIA_ROOT,\n"
        "    'media_url': settings.MEDIA_URL, 'apps': settings.INSTALLED_APPS,\n"
        "    'storage_is_default': services.storage() is storages['default'],\n"
        "    'mailer': type(services.mailer()).__name__,\n"
        "    'verify_max_age': settings.ACCOUNTS_VERIFY_MAX_AGE,\n"
        "    'avatar_max': settings.ACCOUNTS_AVATAR_MAX_BYTES}))\n"
    )
    return _run_in_project(project, code, **env)


def test_settings_derive_the_content_batteries_zero_infrastructure(project: Path) -> None:
    info = _content_settings(project)
    assert {
        "toolkit_batteries.mailer",
        "toolkit_batteries.storage",
        "toolkit_batteries.media",
    } <= set(info["apps"])
    assert info["backend"] == "toolkit_batteries.mailer.adapters.log.LogMailer"
    assert info["mailer"] == "LogMailer"
    assert info["log_body"] == "none"  # production never logs a mail's body (its link)
    assert info["from"] == f"{NAME} <noreply@localhost>"
    default = info["storages"]["default"]
    assert default["BACKEND"] == "toolkit_batteries.storage.adapters.local.LocalStorage"
    assert info["storage_is_default"] is True
    assert info["media_root"] == str(project / "media") and info["media_url"] == "/media/"
    assert (info["verify_max_age"], info["avatar_max"]) == (2 * 24 * 3600, 2 * 1024 * 1024)
    # Development logs the body (the verification link is clickable in the log)...
    assert _content_settings(project, TOOLKIT_ENV="dev")["log_body"] == "redacted"
    # ...and the environment moves mail and files without a code change.
    moved = _content_settings(
        project,
        MAILER__DEFAULT__ADAPTER="smtp",
        MAILER__DEFAULT__HOST="smtp.example.com",
        ACCOUNTS_VERIFY_MAX_AGE="600",
    )
    assert moved["backend"] == "toolkit_batteries.mailer.adapters.smtp.SMTPMailer"
    assert moved["verify_max_age"] == 600


def test_jwt_secret_has_a_fallback_only_in_development(project: Path, tmp_path: Path) -> None:
    # Production: no secret in settings at all (it must come from the environment).
    assert "auth" not in _settings_of(project)["toolkit"]
    assert "auth" not in _settings_of(project, TOOLKIT_ENV="production")["toolkit"]
    # Development (DEBUG or TOOLKIT_ENV=dev): a per-project secret from SECRET_KEY.
    debug = _settings_of(project, DJANGO_DEBUG="1")
    secret = debug["toolkit"]["auth"]["options"]["jwt"]["secret"]
    assert len(secret) >= 32 and secret not in debug["secret_key"]
    assert _settings_of(project, TOOLKIT_ENV="dev")["toolkit"]["auth"] == debug["toolkit"]["auth"]
    other = render(tmp_path / "other")
    own = _settings_of(project, DJANGO_DEBUG="1", DJANGO_SECRET_KEY="")
    other_own = _settings_of(other, DJANGO_DEBUG="1", DJANGO_SECRET_KEY="")
    other_secret = other_own["toolkit"]["auth"]["options"]["jwt"]
    assert other_secret["secret"] != own["toolkit"]["auth"]["options"]["jwt"]["secret"]
    # An environment secret wins and leaves no fallback behind.
    env = _settings_of(project, DJANGO_DEBUG="1", AUTH__DEFAULT__JWT_SECRET=TEST_JWT_SECRET)
    assert "auth" not in env["toolkit"]


def test_environment_moves_the_orm_to_postgresql_without_code_changes(
    project: Path, postgres_dsn: str
) -> None:
    info = _settings_of(project, DB__DEFAULT__ADAPTER="sqlserver", DB__DEFAULT__DSN=postgres_dsn)
    assert info["engine"] == "django.db.backends.postgresql"
    assert info["name"] == postgres_dsn.rsplit("/", 1)[1]  # the fixture's database
    assert info["host"] == "127.0.0.1"
    assert _settings_of(project, DJANGO_DEBUG="1")["debug"] is True


def _backend_pids_of_two_requests(project: Path, **env: str) -> list[int]:
    """Run two request cycles (Django's signals) in the rendered project; their server pids."""
    code = (
        "from django.core.signals import request_finished, request_started\n"
        "from django.db import connection\n"
        "pids = []\n"
        "for _ in range(2):\n"
        "    request_started.send(None)\n"
        "    with connection.cursor() as cursor:\n"
        "        cursor.execute('SELECT pg_backend_pid()')\n"
        "        pids.append(cursor.fetchone()[0])\n"
        "    request_finished.send(None)\n"
        "print(json.dumps(pids))\n"
    )
    return _run_in_project(project, code, DJANGO_DEBUG="1", **env)


def test_a_postgresql_connection_outlives_a_request_unless_told_not_to(
    project: Path, postgres_dsn: str
) -> None:
    on_postgres = {"TOOLKIT_DATABASE_URL": postgres_dsn}
    first, second = _backend_pids_of_two_requests(project, **on_postgres)
    assert first == second  # kept (CONN_MAX_AGE 60 by default, health-checked)
    first, second = _backend_pids_of_two_requests(
        project, **on_postgres, TOOLKIT_DB_CONN_MAX_AGE="0"
    )
    assert first != second  # Django's own default: a connection per request
    # Beside Django's pool CONN_MAX_AGE stays 0 (Django refuses both); the pool keeps it.
    pooled = _backend_pids_of_two_requests(project, **on_postgres, DB__DEFAULT__MAX_CONNS="2")
    assert len(pooled) == 2


def test_demo_smoke_serves_healthz_and_stops_cleanly(tmp_path: Path) -> None:
    demo_dir = tmp_path / "demo"
    env = {k: v for k, v in _clean_env().items() if k != "DJANGO_SECRET_KEY"} | {
        "DEMO_SMOKE": "1",
        "DEMO_DIR": str(demo_dir),
        "DEMO_NAME": "smokeproj",
        "PORT": str(free_port()),
        "VENV": str(BIN.parent),
        "WEB_CONCURRENCY": "1",
    }
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh")],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=110,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output

    answers = dict(re.findall(r"^GET (\S+) -> 200 (.*)$", result.stdout, re.M))
    links = sorted(path for path in answers if path.startswith("/media/"))
    assert set(answers) - set(links) == {"/healthz", "/", "/api/me", "/v1/notes"}, result.stdout
    assert json.loads(answers["/healthz"]) == {"status": "ok", "db": "sqlite"}
    index = json.loads(answers["/"])
    assert index["project"] == "smokeproj"
    assert "toolkit" not in index and "django" not in index  # no versions for anyone

    # The reference application: register, log in, read /api/me with the token.
    posts = dict(re.findall(r"^POST (\S+) -> (\d+ .*)$", result.stdout, re.M))
    status, body = posts["/api/register"].split(" ", 1)
    assert status == "201" and json.loads(body)["email"] == "demo@example.com"
    status, body = posts["/api/login"].split(" ", 1)
    assert status == "200" and json.loads(body)["token"] == "[redacted]"
    me = json.loads(answers["/api/me"])
    assert me["email"] == "demo@example.com" and me["name"] == "Demo"
    assert me["verified"] is False
    assert "[redacted]" in result.stdout and "eyJ" not in result.stdout  # no JWT shown

    # The content batteries: the verification mail is in the server's log (the `log`
    # mailer), its token verifies the account, and the avatar's presigned links serve it.
    assert re.search(
        r"toolkit\.mailer mail\.default: from smokeproj <noreply@localhost> to "
        r"demo@example\.com subject 'Verify your email address'",
        result.stderr,
    ), result.stderr
    assert "mail: verification mail found in the server log: http://127.0.0.1:" in result.stdout
    status, body = posts["/api/verify"].split(" ", 1)
    assert status == "200" and json.loads(body)["verified"] is True
    avatar = re.search(r"^PUT /api/me/avatar -> 200 (.*)$", result.stdout, re.M)
    assert avatar, result.stdout
    uploaded = json.loads(avatar.group(1))
    assert uploaded["avatar"]["content_type"] == "image/png"
    assert uploaded["thumbnail"]["content_type"] == "image/webp"
    assert uploaded["avatar"]["url"].endswith("&t=[redacted]&s=[redacted]")
    assert len(links) == 2 and any(p.startswith("/media/avatars/_derived/") for p in links)
    assert answers[next(p for p in links if "/avatar.png?" in p)].startswith("image/png ")
    assert answers[next(p for p in links if "/_derived/" in p)].startswith("image/webp ")
    assert re.search(
        r"^smoke: no secret in the server log \(password, bearer token, link", result.stdout, re.M
    )
    # The access log names the links' paths, never their query (the signature).
    assert re.search(r'"GET /media/avatars/[^ ?]+/avatar\.png HTTP/1\.1" 200', result.stderr)
    assert "&s=" not in result.stderr

    # The routes compiled from schema/app.toolkit, with the token and without it.
    assert "demo: toolkit new smokeproj" in result.stdout
    # No variable was set: the demo itself switches to development (the project's own key).
    assert "demo: TOOLKIT_ENV=development" in result.stdout
    assert "demo: toolkit compile" in result.stdout
    assert "demo: toolkit db migrate" in result.stdout
    assert "All 17 services OK" in result.stdout
    assert "create api/migrations/0001_initial.py" in result.stdout
    status, body = posts["/v1/notes"].split(" ", 1)
    note = json.loads(body)
    assert status == "200" and note["title"] == "Try the generated API"
    listed = json.loads(answers["/v1/notes"])
    assert [item["id"] for item in listed["items"]] == [note["id"]]
    assert re.search(
        r"^GET /v1/notes \(no token\) -> 401 .*\[WWW-Authenticate: Bearer", result.stdout, re.M
    ), result.stdout
    assert "generated a random JWT secret" in result.stdout

    assert "smoke: ok (server exited cleanly)" in result.stdout
    # The healthz view logs through services.log() (the slog adapter, standard logging).
    assert re.search(r"toolkit\.app healthz db=sqlite", result.stderr), result.stderr
    # migrate ran against the project's own SQLite file.
    assert (demo_dir / "db.sqlite3").is_file()


#: Runs in the rendered project (``DJANGO_SETTINGS_MODULE`` set): the reference app and the
#: routes compiled from ``schema/app.toolkit``, through Django's test client.
_COMPILED_API_SCRIPT = """
import json, django
django.setup()
from django.test import Client

client = Client()
out = {}

def call(method, path, data=None, token=None, **extra):
    if token:
        extra["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    if data is not None:
        extra.update(data=json.dumps(data), content_type="application/json")
    response = getattr(client, method)(path, secure=True, **extra)  # production is HTTPS
    try:
        body = response.json()
    except ValueError:
        body = None
    return {"status": response.status_code, "body": body,
            "www_authenticate": response.headers.get("WWW-Authenticate", "")}

account = {"email": "ann@example.com", "password": "correct horse", "name": "Ann"}
out["register"] = call("post", "/api/register", account)
login = call("post", "/api/login", {"email": account["email"], "password": account["password"]})
out["login"] = login["status"]
token = login["body"]["token"]
out["create"] = call("post", "/v1/notes", {"title": "first note"}, token)
note_id = out["create"]["body"]["id"]
out["list"] = call("get", "/v1/notes", token=token)
out["get"] = call("get", f"/v1/notes/{note_id}", token=token)
out["missing"] = call("get", "/v1/notes/00000000-0000-4000-8000-000000000000", token=token)
out["anonymous"] = call("get", "/v1/notes")
out["invalid"] = call("post", "/v1/notes", {"title": ""}, token)
for title in ("second", "third"):
    call("post", "/v1/notes", {"title": title}, token)
first = call("get", "/v1/notes?limit=2", token=token)["body"]
rest = call("get", f"/v1/notes?limit=2&cursor={first['next_cursor']}", token=token)["body"]
out["pages"] = [[n["title"] for n in first["items"]], [n["title"] for n in rest["items"]],
                rest["next_cursor"]]
schema = client.get("/api/schema/", {"format": "json"}, secure=True)
paths = sorted(json.loads(schema.content)["paths"])
out["openapi"] = {"status": schema.status_code, "paths": paths}
print(json.dumps(out))
"""


def test_compiled_schema_serves_notes_beside_the_reference_app(tmp_path: Path) -> None:
    project = render(tmp_path / "proj")
    handlers_before = (project / "api" / "handlers.py").read_text()
    env = {"AUTH__DEFAULT__JWT_SECRET": TEST_JWT_SECRET}

    compiled = manage(project, "compile_schema", **env)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert "create api/generated/urls.py" in compiled.stdout
    assert "create api/migrations/0001_initial.py" in compiled.stdout
    assert "api/handlers.py" not in compiled.stdout  # the template ships the real handlers
    migrated = manage(project, "migrate", "--no-input", **env)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    assert "Applying api.0001_initial... OK" in migrated.stdout
    checked = manage(project, "check", **env)
    assert checked.returncode == 0 and "no issues" in checked.stdout, checked.stderr

    child_env = (
        _clean_env()
        | env
        | {
            "DJANGO_SETTINGS_MODULE": f"{NAME}.settings",
            "DJANGO_ALLOWED_HOSTS": "testserver",
        }
    )
    out = run_python_json(_COMPILED_API_SCRIPT, cwd=project, env=child_env, timeout=60)

    assert out["register"]["status"] == 201 and out["login"] == 200
    created = out["create"]
    assert created["status"] == 200, created
    assert created["body"]["title"] == "first note" and created["body"]["done"] is False
    listed = out["list"]
    assert listed["status"] == 200
    assert [n["id"] for n in listed["body"]["items"]] == [created["body"]["id"]]
    assert listed["body"]["next_cursor"] is None
    assert out["get"]["status"] == 200 and out["get"]["body"] == created["body"]
    assert out["missing"]["status"] == 404
    assert out["missing"]["body"]["error"]["code"] == "not_found"
    assert out["anonymous"]["status"] == 401
    assert out["anonymous"]["body"]["error"]["code"] == "unauthenticated"
    assert out["anonymous"]["www_authenticate"].startswith("Bearer")
    assert out["invalid"]["status"] == 400
    assert out["invalid"]["body"]["error"]["code"] == "invalid_argument"
    # Keyset pagination on (created_at, id): two pages, in creation order, then the end.
    assert out["pages"] == [["first note", "second"], ["third"], None]
    assert out["openapi"]["status"] == 200
    assert out["openapi"]["paths"] == ["/v1/notes", "/v1/notes/{id}"]

    # A second compile finds nothing to do: no new migration, handlers.py untouched.
    migrations = sorted(p.name for p in (project / "api" / "migrations").glob("*.py"))
    again = manage(project, "compile_schema", **env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.strip() == "nothing to change"
    assert sorted(p.name for p in (project / "api" / "migrations").glob("*.py")) == migrations
    assert (project / "api" / "handlers.py").read_text() == handlers_before
    assert migrations == ["0001_initial.py", "__init__.py"]

"""docs/deploy.md's worked example, and the commands of the deploy path.

One rendered project, run twice through the installed ``toolkit`` script:

1. on its defaults (SQLite file, database queue, memory state): ``toolkit serve`` with
   one worker, a job dispatched by a request, ``toolkit queue:work`` runs it once;
2. with only environment variables changed (``TOOLKIT_DATABASE_URL`` on PostgreSQL,
   ``TOOLKIT_REDIS_URL`` on Redis, ``STORAGE__DEFAULT__*`` on moto's S3 with
   authentication on, ``WEB_CONCURRENCY=2``): ``toolkit serve`` passes its deployment
   checks with two web workers (it refuses memory state there), two ``toolkit
   queue:work`` processes share the queue, every job dispatched by a request runs
   exactly once, and a file a request writes lands in the bucket.

A second rendered project moves its jobs to Celery by ``TOOLKIT_JOBS__DISPATCHER`` and
``TOOLKIT_JOBS__BROKER_URL`` alone (RabbitMQ; ``toolkit queue:work`` is the Celery worker).

Also: ``toolkit generate deploy`` (``--dry-run`` prints the files, writes nothing) and
``toolkit doctor --deploy`` reading the topology it wrote.
"""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import SCRIPT, base_env, run_toolkit, start_serve
from tests.cli.test_end_to_end import _wait_until_up as _wait_for_healthz
from tests.ports import free_port
from tests.support.databases import empty_postgres_database

#: The machine's RabbitMQ, the Celery broker of the Celery example.
AMQP = "amqp://guest:guest@127.0.0.1:5672//"

#: The user's job and the view that dispatches it (the project's own code, unchanged
#: between the two runs).
JOBS = '''"""Jobs of the api app."""

import os

from toolkit_batteries.queue.jobs import job


@job(queue="default")
def record(token: str, path: str) -> None:
    """Append the token and the worker's pid: the test counts how often each ran."""
    with open(path, "a") as marker:
        marker.write(f"{token} {os.getpid()}\\n")
'''

VIEW = '''

def dispatch_record(request):
    """Dispatch one ``record`` job (the worked example's request)."""
    import json
    import os

    from django.http import JsonResponse

    from .jobs import record

    body = json.loads(request.body)
    record.dispatch(body["token"], body["path"])
    return JsonResponse({"pid": os.getpid()})


def store_upload(request):
    """Write the request's body to the storage battery (local files, or S3 by environment)."""
    from django.http import JsonResponse

    from toolkit_batteries import services

    key = services.storage().bucket("uploads").put(request.GET["key"], request.body)
    return JsonResponse({"key": key})
'''


def _render(tmp_path: Path, env: dict[str, str], jobs: str = JOBS) -> Path:
    project = tmp_path / "shop"
    created = run_toolkit("new", "shop", "--dir", str(project), env=env)
    assert created.returncode == 0, created
    (project / "api" / "jobs.py").write_text(jobs)
    views = project / "api" / "views.py"
    views.write_text(views.read_text() + VIEW)
    urls = project / "shop" / "urls.py"
    text = urls.read_text()
    anchor = '    path("healthz", views.healthz, name="healthz"),\n'
    assert anchor in text
    text = text.replace(
        anchor,
        anchor
        + '    path("dispatch", csrf_exempt(views.dispatch_record)),\n'
        + '    path("upload", csrf_exempt(views.store_upload)),\n',
    )
    text = text.replace(
        "from django.urls import include, path\n",
        "from django.urls import include, path\n"
        "from django.views.decorators.csrf import csrf_exempt\n",
    )
    urls.write_text(text)
    return project


def _post(base: str, body: dict) -> dict:
    request = urllib.request.Request(
        base + "/dispatch", data=json.dumps(body).encode(), method="POST"
    )
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        return json.loads(response.read())


def _upload(base: str, key: str, data: bytes) -> None:
    request = urllib.request.Request(f"{base}/upload?key={key}", data=data, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200 and json.loads(response.read()) == {"key": key}


def _stop(process: subprocess.Popen[str], limit: float = 30) -> tuple[int, str]:
    """SIGTERM, as systemd and the container runtime stop it; return (exit code, stderr)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        _out, err = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        process.kill()
        _out, err = process.communicate()
    return process.returncode, err


def _ran(marker: Path) -> Counter[str]:
    if not marker.exists():
        return Counter()
    return Counter(line.split()[0] for line in marker.read_text().splitlines() if line)


def _runners(marker: Path, prefix: str) -> set[int]:
    """Return the pids that ran the jobs whose token starts with ``prefix``."""
    lines = marker.read_text().splitlines() if marker.exists() else []
    return {int(line.split()[1]) for line in lines if line.startswith(prefix)}


def _children(pid: int) -> set[int]:
    """Return the live child processes of ``pid`` (gunicorn's workers under its arbiter)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # exited meanwhile
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _settled_children(pid: int, wanted: int, limit: float = 30) -> set[int]:
    """Wait (bounded) until ``pid`` has ``wanted`` children; a worker may still be booting."""
    deadline = time.monotonic() + limit
    found = _children(pid)
    while len(found) < wanted and time.monotonic() < deadline:
        time.sleep(0.1)
        found = _children(pid)
    return found


def _wait_for_jobs(marker: Path, tokens: list[str], limit: float = 30) -> Counter[str]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        ran = _ran(marker)
        if all(ran[token] for token in tokens):
            return ran
        time.sleep(0.1)
    return _ran(marker)


def _wait_until_up(base: str, server: subprocess.Popen[str]) -> None:
    """Wait for /healthz; a loaded machine takes a while to check and fork two workers."""
    _wait_for_healthz(base, server, limit=90)


def _worker(project: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SCRIPT), "queue:work"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """Create a fresh PostgreSQL database on the machine's server; drop it afterwards."""
    server = "postgresql://postgres@127.0.0.1:5432/postgres"
    with empty_postgres_database(server, "toolkit_deploy") as url:
        yield url


@pytest.fixture
def s3_with_auth() -> Iterator[Any]:
    """moto's S3 with IAM authentication on (every request signed by a known key)."""
    from tests.batteries.storage.test_s3_auth import AuthMoto

    server = AuthMoto()
    try:
        yield server
    finally:
        server.stop()


def test_worked_example_one_machine_then_postgres_redis_and_s3_by_environment_alone(
    tmp_path: Path, postgres_database: str, s3_with_auth: Any
) -> None:
    marker = tmp_path / "ran.txt"
    common = {
        "AUTH__DEFAULT__JWT_SECRET": secrets.token_urlsafe(48),
        "DJANGO_SECURE_SSL_REDIRECT": "0",  # plain HTTP on the loopback interface
        "QUEUE__DEFAULT__POLL_TIMEOUT": "200ms",
    }
    one_machine = base_env(WEB_CONCURRENCY="1", **common)
    project = _render(tmp_path, one_machine)

    # 1. The defaults: one web process, one worker, the SQLite file.
    migrated = run_toolkit("db", "migrate", cwd=project, env=one_machine)
    assert migrated.returncode == 0, migrated
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(project, one_machine, port)
    try:
        _wait_until_up(base, server)
        tokens = [f"one-{n}" for n in range(3)]
        for token in tokens:
            _post(base, {"token": token, "path": str(marker)})
        _upload(base, "one.txt", b"on this machine")
    finally:
        assert _stop(server)[0] == 0
    assert (project / "media" / "uploads" / "one.txt").read_bytes() == b"on this machine"
    assert _ran(marker) == Counter()  # queued, not run in the web process
    drained = run_toolkit("queue:work", "--stop-when-empty", cwd=project, env=one_machine)
    assert drained.returncode == 0, drained
    assert _ran(marker) == Counter(dict.fromkeys(tokens, 1))
    assert (project / "db.sqlite3").is_file()

    # 2. The same files; only the environment changes.
    redis_db = str(8 + secrets.randbelow(7))
    several = base_env(
        WEB_CONCURRENCY="2",
        TOOLKIT_DATABASE_URL=postgres_database,
        TOOLKIT_REDIS_URL=f"redis://127.0.0.1:6379/{redis_db}",
        STORAGE__DEFAULT__ADAPTER="s3",
        STORAGE__DEFAULT__ENDPOINT=s3_with_auth.url,
        STORAGE__DEFAULT__REGION="us-east-1",
        STORAGE__DEFAULT__ACCESS_KEY_ID=s3_with_auth.access_key,
        STORAGE__DEFAULT__SECRET_ACCESS_KEY=s3_with_auth.secret_key,
        # moto listens on plain HTTP at a loopback address; a real S3 endpoint needs neither.
        STORAGE__DEFAULT__ALLOW_INSECURE="1",
        STORAGE__DEFAULT__ALLOW_PRIVATE="1",
        **common,
    )
    s3 = s3_with_auth.client("s3", s3_with_auth.access_key, s3_with_auth.secret_key)
    s3.create_bucket(Bucket="uploads")
    migrated = run_toolkit("db", "migrate", cwd=project, env=several)
    assert migrated.returncode == 0, migrated
    doctor = run_toolkit("doctor", "--json", cwd=project, env=several)
    assert doctor.returncode == 0, doctor
    configured = {(r["service"], r["instance"]) for r in doctor.json["data"]["rows"]}
    configured.discard(("config", ""))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(project, several, port)
    workers = [_worker(project, several), _worker(project, several)]
    try:
        _wait_until_up(base, server)
        web_workers = _settled_children(server.pid, 2)
        # A fresh start: nothing used yet, and /readyz has a row for every service.
        readyz = urllib.request.urlopen(base + "/readyz", timeout=10)
        rows = {(r["service"], r["instance"]): r for r in json.loads(readyz.read())["services"]}
        tokens = [f"two-{n}" for n in range(20)]
        web_pids = {_post(base, {"token": t, "path": str(marker)})["pid"] for t in tokens}
        _upload(base, "two.txt", b"in the bucket")
        ran = _wait_for_jobs(marker, tokens)
    finally:
        stopped = [_stop(process) for process in [server, *workers]]
    assert [code for code, _ in stopped] == [0, 0, 0], [err[-2000:] for _, err in stopped]
    assert all(ran[token] == 1 for token in tokens), ran  # each job exactly once
    assert len(ran) == 23  # and nothing else ran (the first three stayed done)
    assert len(web_workers) == 2  # WEB_CONCURRENCY=2: two gunicorn workers
    assert web_pids <= web_workers  # the requests were served by them
    # Every job ran in one of the two queue workers, never in a web worker.
    assert _runners(marker, "two-") <= {worker.pid for worker in workers}
    assert rows["db", "default"]["adapter"] == "sqlserver"
    assert rows["ratelimit", "login"]["adapter"] == "kvserver"
    assert rows["session", "default"]["adapter"] == "kvserver"
    assert rows["storage", "default"]["adapter"] in ("s3", "objstore")
    # The file a request wrote is in the bucket (read back with the signed client).
    assert s3.get_object(Bucket="uploads", Key="two.txt")["Body"].read() == b"in the bucket"
    assert not (project / "media" / "uploads" / "two.txt").exists()
    assert all(row["status"] == "ok" for row in rows.values()), rows
    assert set(rows) == configured  # the rows `toolkit doctor` checks, each one
    assert {"ratelimit", "session", "queue", "scheduler"} <= {s for s, _ in rows}


def test_celery_by_environment_alone_runs_a_request_s_job_once_on_a_celery_worker(
    tmp_path: Path,
) -> None:
    """``TOOLKIT_JOBS__DISPATCHER=celery`` + ``..._BROKER_URL``: no settings file changes."""
    marker = tmp_path / "ran.txt"
    queue = f"deploy-celery-{uuid.uuid4().hex[:10]}"  # this test's own queue on the broker
    env = base_env(
        WEB_CONCURRENCY="1",
        AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48),
        DJANGO_SECURE_SSL_REDIRECT="0",
        TOOLKIT_JOBS__DISPATCHER="celery",
        TOOLKIT_JOBS__BROKER_URL=AMQP,
    )
    project = _render(tmp_path, env, JOBS.replace('queue="default"', f'queue="{queue}"'))
    settings_text = (project / "shop" / "settings.py").read_text()
    assert "TOOLKIT_JOBS = " not in settings_text  # the environment alone selects Celery
    migrated = run_toolkit("db", "migrate", cwd=project, env=env)
    assert migrated.returncode == 0, migrated
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(project, env, port)
    worker = _worker(project, env)
    try:
        _wait_until_up(base, server)
        tokens = [f"celery-{n}" for n in range(3)]
        web_pids = {_post(base, {"token": t, "path": str(marker)})["pid"] for t in tokens}
        ran = _wait_for_jobs(marker, tokens, limit=60)
    finally:
        stopped = [_stop(process) for process in (server, worker)]
        _delete_broker_queue(queue)
    assert ran == Counter(dict.fromkeys(tokens, 1)), (ran, stopped[1][1][-2000:])
    assert _runners(marker, "celery-") == {worker.pid}  # the Celery worker, not the web
    assert worker.pid not in web_pids
    # Celery's own worker log: each task received over the broker and succeeded once.
    assert stopped[1][1].count("Task api.jobs.record[") == 2 * len(tokens), stopped[1][1]
    assert [code for code, _ in stopped] == [0, 0], [err[-2000:] for _, err in stopped]
    # The database queue stayed empty: nothing went through the toolkit queue.
    on_queue = base_env(AUTH__DEFAULT__JWT_SECRET=env["AUTH__DEFAULT__JWT_SECRET"])
    drained = run_toolkit("queue:work", "--stop-when-empty", cwd=project, env=on_queue)
    assert drained.returncode == 0, drained
    assert _ran(marker) == ran


def _delete_broker_queue(name: str) -> None:
    """Remove the test's queue from RabbitMQ (Celery declares it durable)."""
    from kombu import Connection

    with Connection(AMQP) as conn:
        conn.default_channel.queue_delete(name)


def test_serve_refuses_two_workers_on_memory_state(tmp_path: Path) -> None:
    env = base_env(
        WEB_CONCURRENCY="2",
        AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48),
        DJANGO_SECURE_SSL_REDIRECT="0",
    )
    project = tmp_path / "shop"
    assert run_toolkit("new", "shop", "--dir", str(project), env=env).returncode == 0
    checked = subprocess.run(
        [str(Path(SCRIPT).parent / "python"), "manage.py", "check", "--deploy"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode != 0
    assert "(toolkit_batteries.E020) ratelimit.login keeps its state" in checked.stderr
    refused = run_toolkit("serve", "--port", str(free_port()), cwd=project, env=env)
    assert refused.returncode == 3, refused
    assert "toolkit_batteries.E020" in refused.stderr
    # --workers 2 is two processes as well, whatever WEB_CONCURRENCY says.
    one = env | {"WEB_CONCURRENCY": "1"}
    flagged = run_toolkit(
        "serve", "--workers", "2", "--port", str(free_port()), cwd=project, env=one
    )
    assert flagged.returncode == 3 and "toolkit_batteries.E020" in flagged.stderr, flagged


def test_generate_deploy_dry_run_prints_every_process_and_writes_nothing(tmp_path: Path) -> None:
    env = base_env(AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48))
    project = tmp_path / "shop"
    assert run_toolkit("new", "shop", "--dir", str(project), env=env).returncode == 0
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    shown = run_toolkit("generate", "deploy", "--dry-run", "--container", cwd=project, env=env)
    assert shown.returncode == 0, shown
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before
    for line in (
        "--- Procfile",
        "web: toolkit serve",
        "worker: toolkit queue:work",
        "scheduler: toolkit schedule:run",
        "--- deploy/systemd/shop-worker@.service",
        "ExecStartPre=/srv/shop/.venv/bin/toolkit doctor --strict --service queue",
        "KillSignal=SIGTERM",
        "TimeoutStopSec=65",
        "--- Containerfile",
        "COPY wheels/ /tmp/wheels/",
        "dry run: would write deploy/systemd/shop-web.service",
    ):
        assert line in shown.stdout.splitlines(), line

    written = run_toolkit("generate", "deploy", "--json", cwd=project, env=env)
    assert written.returncode == 0, written
    names = [p["name"] for p in written.json["data"]["processes"]]
    assert names == ["web", "worker", "scheduler"]
    assert (project / "deploy" / "systemd" / "shop-web.service").is_file()
    again = run_toolkit("generate", "deploy", cwd=project, env=env)
    assert again.returncode == 1 and "already exists" in again.stderr

    # doctor --deploy reads the topology the files declare: workers are second processes.
    doctor = run_toolkit("doctor", "--deploy", "--json", cwd=project, env=env)
    assert doctor.returncode == 0, doctor
    topology = doctor.json["data"]["topology"]
    assert topology["multi_process"] is True
    assert "queue_work (Procfile)" in topology["workers"]
    assert "ratelimit.login" in topology["memory_state"]
    failed = [r for r in doctor.json["data"]["rows"] if not r["ok"]]
    assert {"service": "ratelimit", "instance": "login"}.items() <= failed[0].items() or any(
        (r["service"], r["instance"]) == ("ratelimit", "login") for r in failed
    )
    strict = run_toolkit("doctor", "--deploy", "--strict", cwd=project, env=env)
    assert strict.returncode == 4, strict

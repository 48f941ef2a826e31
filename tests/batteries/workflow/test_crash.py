"""A real worker process SIGKILLed between steps and mid-step; the run finishes elsewhere.

Workers are ``python manage.py queue_work`` children on the real
PostgreSQL server (db queue and db workflow on the session's migrated database, queue
visibility 2 s, step lease 2 s). Steps write their effects to ``wf_test_effects`` inside
the step's transaction (:mod:`.crash_fixture`); the test reads that table.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.workflow import RunStatus

from . import crash_fixture

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def crash_env(postgres_dsn):
    """Yield (workflow service, worker env) on PostgreSQL with a unique namespace."""
    namespace = f"crash{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS wf_test_effects "
            "(id serial PRIMARY KEY, run_id text NOT NULL, step text NOT NULL, pid int NOT NULL)"
        )
        conn.execute("DELETE FROM toolkit_queue_message WHERE topic = 'jobs:default'")
    queue = {"dsn": postgres_dsn, "visibility_timeout": "2s", "poll_timeout": "1s"}
    toolkit = {
        "queue": {"adapter": "db", "options": queue},
        "workflow": {"adapter": "db", "options": {"dsn": postgres_dsn, "namespace": namespace}},
    }
    container = Container(Config.load(toolkit, {}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUEUE_", "WORKFLOW_", "WF_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings",
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
        TOOLKIT_JOBS__IMPORTS="tests.batteries.workflow.crash_fixture",
        QUEUE__DEFAULT__ADAPTER="db",
        QUEUE__DEFAULT__DSN=postgres_dsn,
        QUEUE__DEFAULT__VISIBILITY_TIMEOUT="2s",
        QUEUE__DEFAULT__POLL_TIMEOUT="1s",
        WORKFLOW__DEFAULT__ADAPTER="db",
        WORKFLOW__DEFAULT__DSN=postgres_dsn,
        WORKFLOW__DEFAULT__NAMESPACE=namespace,
    )
    yield container.workflow(), env, postgres_dsn
    container.workflow()._runs.delete()
    container.close()


def start_worker(env: dict, log: Path, **extra: str) -> subprocess.Popen:
    with open(log, "ab") as output:
        return subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "queue_work"],
            cwd=ROOT,
            env={**env, **extra},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def effects(dsn: str, run_id: str) -> list[tuple[str, int]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT step, pid FROM wf_test_effects WHERE run_id = %s ORDER BY id", (run_id,)
        ).fetchall()
    return [(step, pid) for step, pid in rows]


def wait_file(path: Path, timeout: float, workers: list) -> int:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text()):
        if time.monotonic() > deadline:
            pytest.fail(f"no worker hung within {timeout}s")
        assert all(w.poll() is None for w in workers), "a worker exited early"
        time.sleep(0.05)
    return int(path.read_text())


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@pytest.mark.parametrize("hang", ["after:two", "during:three"])
def test_a_killed_worker_run_completes_elsewhere_with_each_step_once(hang, crash_env, tmp_path):
    workflow, env, dsn = crash_env
    flag = tmp_path / "hung.pid"
    hang_env = {"WF_HANG": hang, "WF_HANG_FILE": str(flag)}
    victim = start_worker(env, tmp_path / "victim.log", **hang_env)
    survivor = None
    try:
        run_id = workflow.start(crash_fixture.NAME, {"order": 7})
        assert wait_file(flag, 60, [victim]) == victim.pid
        before = effects(dsn, run_id)
        assert [step for step, _ in before] == ["one", "two"]
        victim.send_signal(signal.SIGKILL)
        assert victim.wait(10) == -signal.SIGKILL

        survivor = start_worker(env, tmp_path / "survivor.log", **hang_env)
        info = workflow.wait(run_id, timeout=60, interval=0.1)
        assert info.status == RunStatus.COMPLETED, (info.status, info.error)

        done = effects(dsn, run_id)
        # Every step took effect exactly once; the victim's half-done step rolled back.
        assert [step for step, _ in done] == list(crash_fixture.STEPS)
        pids = dict(done)
        assert pids["one"] == pids["two"] == victim.pid
        assert pids["three"] == pids["four"] == survivor.pid
        by_name = {s.name: s for s in info.steps}
        assert by_name["three"].result["pid"] == survivor.pid
        # Mid-step, the victim's attempt was counted; between steps, nothing was lost.
        assert by_name["three"].attempts == (2 if hang.startswith("during") else 1)
    finally:
        for process in (victim, survivor):
            if process is not None:
                stop(process)

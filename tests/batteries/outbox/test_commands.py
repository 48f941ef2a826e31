"""``manage.py outbox_relay`` and ``toolkit outbox:relay`` in child processes, on SQLite.

The outbox lives in a migrated SQLite file both this process and the children open
(``OUTBOX__DEFAULT__DSN``); the relay publishes through the real ``queue`` battery (the
``db`` queue on the same file) because ``publisher`` says so.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.outbox import decode
from toolkit_batteries.outbox.management.commands.outbox_relay import Command

from .conftest import ROOT, relay_env

TOOLKIT = Path(sys.executable).parent / "toolkit"


def run(env: dict[str, str], *args: str, manage: bool = False) -> subprocess.CompletedProcess:
    argv = (
        [sys.executable, str(ROOT / "manage.py"), "outbox_relay", *args]
        if manage
        else [str(TOOLKIT), *args]
    )
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def envelope(done: subprocess.CompletedProcess) -> dict:
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done
    return json.loads(lines[0])


@pytest.fixture
def prepared(sqlite_dsn):
    """Three messages: one sent, two dead (max_attempts 1). Return (env, dead rows, path)."""
    block = {"adapter": "db", "options": {"dsn": sqlite_dsn, "max_attempts": 1}}
    container = Container(Config.load({"outbox": block}, {}))
    try:
        outbox = container.outbox()
        outbox.publish("orders", {"n": 1})
        outbox.relay(lambda record: None).run_once()
        outbox.publish("orders", {"n": 2})
        outbox.publish("orders", {"secret": "card-4111"})

        def fail(record):
            raise ConnectionError("broker down")

        assert outbox.relay(fail).run_once().dead == 2
        rows = [record.row for record in outbox.dead_messages()]
    finally:
        container.close()
    env = relay_env(
        OUTBOX__DEFAULT__DSN=sqlite_dsn,
        OUTBOX__DEFAULT__PUBLISHER="queue",
        QUEUE__DEFAULT__ADAPTER="db",
        QUEUE__DEFAULT__DSN=sqlite_dsn,
    )
    return env, rows, sqlite_dsn


def test_status_dlq_and_purge_through_the_cli(prepared):
    env, (first, second), path = prepared
    status = envelope(run(env, "--json", "outbox:relay", "status"))
    assert status["ok"] is True and status["command"] == "outbox:relay"
    data = status["data"]
    assert (data["pending"], data["processed"], data["failed"]) == (0, 1, 2)
    assert data["last_error"] == "ConnectionError: broker down"
    assert data["stalled"] is False

    listed = run(env, "--json", "outbox:relay", "dlq", "list", "--limit", "5")
    items = envelope(listed)["data"]
    assert [item["id"] for item in items] == [first, second]
    assert all(item["status"] == "dead" and item["attempts"] == 1 for item in items)
    assert "card-4111" not in listed.stdout  # payloads never printed

    text = run(env, "outbox_relay", "dlq", "requeue", "--id", str(first))
    assert text.returncode == 0 and "requeued 1 dead message(s)" in text.stdout
    purged = envelope(run(env, "--json", "outbox:relay", "dlq", "purge", "--id", str(second)))
    assert purged["data"] == {"id": second, "deleted": 1}
    trimmed = envelope(run(env, "--json", "outbox:relay", "purge", "--before", "0s"))
    assert trimmed["data"] == {"deleted": 1}
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT id, status, attempts FROM toolkit_outbox_message").fetchall()
    assert rows == [(first, "pending", 0)]


def test_misuse_exits_2_and_bad_configuration_exits_3(prepared):
    env, (first, _), _ = prepared
    assert run(env, "outbox:relay", "dlq", "requeue").returncode == 2
    both = run(env, "outbox:relay", "dlq", "requeue", "--id", str(first), "--all")
    assert both.returncode == 2
    assert run(env, "outbox:relay", "purge", "--before=-5h").returncode == 2
    assert run(env, "outbox:relay", "dlq", "list", "--limit", "5000").returncode == 2
    bad = run({**env, "OUTBOX__DEFAULT__BATCH_SIZE": "-5"}, "outbox:relay", "status")
    assert bad.returncode == 3 and "batch_size" in bad.stderr
    unset = run({**env, "OUTBOX__DEFAULT__PUBLISHER": ""}, "outbox:relay", "--once")
    assert unset.returncode == 3 and '"publisher"' in unset.stderr


def test_the_relay_command_publishes_to_the_queue_battery(prepared):
    env, _, path = prepared
    assert run(env, "dlq", "requeue", "--all", manage=True).returncode == 0
    done = run(env, "outbox:relay", "--stop-when-empty")
    assert done.returncode == 0, done
    assert "outbox_relay: db outbox.default" in done.stdout
    assert "2 sent" in done.stdout
    with sqlite3.connect(path) as conn:
        bodies = [row[0] for row in conn.execute("SELECT body FROM toolkit_queue_message")]
        sent = conn.execute(
            "SELECT count(*) FROM toolkit_outbox_message WHERE status = 'sent'"
        ).fetchone()[0]
    delivered = [decode(bytes(body)) for body in bodies]
    assert [d.topic for d in delivered] == ["orders", "orders"]
    assert delivered[0].json() == {"n": 2}
    assert sent == 3


def test_the_cli_and_the_management_command_share_their_flags():
    parser = Command().create_parser("manage.py", "outbox_relay")
    flags = {option for action in parser._actions for option in action.option_strings}
    assert {"--instance", "--once", "--stop-when-empty", "--max-batches", "--publish"} <= flags
    ran = subprocess.run(
        [str(TOOLKIT), "outbox:relay", "--help"], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0
    for flag in ("--instance", "--once", "--stop-when-empty", "--max-batches", "--publish"):
        assert flag in ran.stdout
    for sub in ("status", "dlq", "purge"):
        assert sub in ran.stdout

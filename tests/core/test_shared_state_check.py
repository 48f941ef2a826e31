"""A ``memory`` adapter for state several processes must share is one system check.

``toolkit_batteries.W020`` outside development (unless one process is declared) and
``toolkit_batteries.E020`` under ``--deploy`` once the topology has a second process:
``WEB_CONCURRENCY`` above 1, or a worker process in the project's Procfile or units.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core import checks
from django.test import override_settings

from toolkit_batteries.core.topology import detect_topology

#: A project that runs only the ratelimit battery, on memory, and a db queue.
ONLY_RATELIMIT = {"ratelimit": {"login": {"adapter": "memory"}}, "queue": {"adapter": "db"}}
FEW_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "toolkit_batteries",
    "toolkit_batteries.db",
    "toolkit_batteries.queue",
    "toolkit_batteries.ratelimit",
]


def messages(*, deploy: bool) -> list[checks.CheckMessage]:
    found = checks.run_checks(include_deployment_checks=deploy, tags=["toolkit"])
    return [m for m in found if m.id in ("toolkit_batteries.W020", "toolkit_batteries.E020")]


@pytest.fixture
def production(monkeypatch, tmp_path):
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    with override_settings(
        DEBUG=False, BASE_DIR=tmp_path, TOOLKIT=ONLY_RATELIMIT, INSTALLED_APPS=FEW_APPS
    ):
        yield tmp_path


def test_check_deploy_errors_on_a_memory_ratelimit_with_two_web_workers(production, monkeypatch):
    monkeypatch.setenv("WEB_CONCURRENCY", "2")
    errors = [m for m in messages(deploy=True) if m.id == "toolkit_batteries.E020"]
    labels = sorted(m.msg.split(" ", 1)[0] for m in errors)
    # Only the instance the project names: nothing uses the implicit "default" one.
    assert labels == ["ratelimit.login"]
    assert all(m.level == checks.ERROR for m in errors)
    assert "web workers: 2 (WEB_CONCURRENCY)" in errors[0].msg
    assert "RATELIMIT__LOGIN__ADAPTER=kvserver" in next(
        m.hint for m in errors if m.msg.startswith("ratelimit.login")
    )


def test_a_worker_process_in_the_procfile_is_a_second_process(production, monkeypatch):
    monkeypatch.setenv("WEB_CONCURRENCY", "1")
    assert [m.id for m in messages(deploy=True)] == []  # one declared process: fine
    (production / "Procfile").write_text(
        "web: toolkit serve --workers 1\nworker: python manage.py queue_work\n"
    )
    errors = [m for m in messages(deploy=True) if m.id == "toolkit_batteries.E020"]
    assert errors and "queue_work (Procfile)" in errors[0].msg


def test_outside_development_memory_state_is_a_warning_unless_one_process_is_declared(
    production, monkeypatch
):
    found = messages(deploy=False)
    assert {m.id for m in found} == {"toolkit_batteries.W020"}
    assert all(m.level == checks.WARNING for m in found)
    monkeypatch.setenv("WEB_CONCURRENCY", "1")
    assert messages(deploy=False) == []
    monkeypatch.setenv("TOOLKIT_ENV", "development")
    monkeypatch.setenv("WEB_CONCURRENCY", "4")
    assert messages(deploy=False) == []


def test_shared_adapters_pass_with_several_processes(production, monkeypatch):
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    toolkit = {"ratelimit": {"adapter": "kvserver"}, "queue": {"adapter": "db"}}
    monkeypatch.setenv("RATELIMIT__LOGIN__ADAPTER", "kvserver")
    with override_settings(TOOLKIT=toolkit):
        assert messages(deploy=True) == []


def test_topology_reads_units_and_the_gunicorn_file_without_running_them(tmp_path: Path):
    units = tmp_path / "deploy" / "systemd"
    units.mkdir(parents=True)
    (units / "shop-scheduler.service").write_text(
        "[Service]\nExecStart=/srv/venv/bin/toolkit schedule:run\n"
    )
    (tmp_path / "gunicorn.conf.py").write_text("raise SystemExit('never run')\nworkers = 3\n")
    topology = detect_topology(tmp_path, {})
    assert (topology.web_workers, topology.web_source) == (3, "gunicorn.conf.py")
    assert topology.workers == ("schedule_run (shop-scheduler.service)",)
    assert topology.multi_process

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


#: Every kind of shared state the issue names, each on memory: ratelimit, idempotency,
#: lock, session, eventbus, the scheduler's slot claims (on the memory lock) and the auth
#: battery's token revocations (no revocation store: kept in the process).
EVERY_KIND = {
    "ratelimit": {"adapter": "memory"},
    "idempotency": {"adapter": "memory"},
    "lock": {"adapter": "memory"},
    "session": {"adapter": "memory"},
    "eventbus": {"adapter": "memory"},
    "scheduler": {"adapter": "embedded"},
    "auth": {"adapter": "jwt", "options": {"jwt": {"secret": "x" * 48}}},
    "queue": {"adapter": "db"},
}


def test_every_kind_of_shared_state_on_memory_is_one_error_each(production, monkeypatch):
    monkeypatch.setenv("WEB_CONCURRENCY", "2")
    with override_settings(TOOLKIT=EVERY_KIND, TOOLKIT_AUTH_REVOCATION=None):
        errors = [m for m in messages(deploy=True) if m.id == "toolkit_batteries.E020"]
    labels = sorted(m.msg.split(" ", 1)[0] for m in errors)
    assert labels == [
        "auth.default",
        "eventbus.default",
        "idempotency.default",
        "lock.default",
        "ratelimit.default",
        "scheduler.default",
        "session.default",
    ]
    hints = {m.msg.split(" ", 1)[0]: m.hint for m in errors}
    assert "LOCK__DEFAULT__ADAPTER=kvserver" in hints["scheduler.default"]  # its claims' lock
    assert "TOOLKIT_AUTH_REVOCATION" in hints["auth.default"]
    assert not any("x" * 48 in m.msg + m.hint for m in errors)  # never an option value


def test_a_systemd_worker_unit_alone_turns_the_warning_into_an_error(production, monkeypatch):
    monkeypatch.setenv("WEB_CONCURRENCY", "1")
    toolkit = {"lock": {"adapter": "memory"}, "queue": {"adapter": "db"}}
    with override_settings(TOOLKIT=toolkit):
        assert messages(deploy=True) == [] and messages(deploy=False) == []
        units = production / "deploy" / "systemd"
        units.mkdir(parents=True)
        (units / "shop-worker@.service").write_text(
            "[Service]\nExecStart=/srv/shop/.venv/bin/toolkit queue:work\n"
        )
        found = messages(deploy=True)
    # The lock it configures and the ratelimit battery it installs, both on memory.
    assert sorted((m.id, m.msg.split(" ", 1)[0]) for m in found) == [
        ("toolkit_batteries.E020", "lock.default"),
        ("toolkit_batteries.E020", "ratelimit.default"),
        ("toolkit_batteries.W020", "lock.default"),
        ("toolkit_batteries.W020", "ratelimit.default"),
    ]
    assert all("queue_work (shop-worker@.service)" in m.msg for m in found)


def test_topology_reads_the_workers_flag_of_the_procfile_web_line(tmp_path: Path):
    (tmp_path / "Procfile").write_text(
        "release: toolkit db migrate\nweb: toolkit serve --workers 3\n"
    )
    topology = detect_topology(tmp_path, {})
    assert (topology.web_workers, topology.web_source, topology.workers) == (3, "Procfile", ())
    # gunicorn's command line beats WEB_CONCURRENCY: a shell with 1 still sees the 3.
    declared = detect_topology(tmp_path, {"WEB_CONCURRENCY": "1"})
    assert (declared.web_workers, declared.single_process) == (3, False)
    assert detect_topology(tmp_path, {"WEB_CONCURRENCY": "5"}).web_workers == 5


def test_the_generated_gunicorn_file_counts_its_default_when_the_variable_is_unset(tmp_path):
    """``toolkit generate server``'s file runs 2 workers unless WEB_CONCURRENCY says otherwise."""
    from toolkit_batteries.cli.scaffold.templates import gunicorn_conf

    (tmp_path / "gunicorn.conf.py").write_text(gunicorn_conf("shop"))
    unset = detect_topology(tmp_path, {})
    assert (unset.web_workers, unset.multi_process) == (2, True)
    assert unset.web_source == "gunicorn.conf.py, WEB_CONCURRENCY unset"
    one = detect_topology(tmp_path, {"WEB_CONCURRENCY": "1"})
    assert (one.web_workers, one.web_source, one.single_process) == (1, "WEB_CONCURRENCY", True)


def test_a_web_unit_declares_its_workers_in_its_environment(tmp_path: Path):
    units = tmp_path / "deploy" / "systemd"
    units.mkdir(parents=True)
    (units / "shop-web.service").write_text(
        "[Service]\nEnvironment=WEB_CONCURRENCY=4\nExecStart=/srv/shop/.venv/bin/toolkit serve\n"
    )
    topology = detect_topology(tmp_path, {})
    assert (topology.web_workers, topology.web_source) == (4, "shop-web.service")
    assert topology.workers == ()

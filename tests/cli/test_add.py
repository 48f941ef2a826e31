"""``toolkit add``: INSTALLED_APPS and TOOLKIT edits, idempotent, validated, never lossy.

The project is rendered once per module (``django-admin startproject``) and copied for
each test; every command runs through the installed console script.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.subprocesses import run_manage

from .conftest import base_env, run_toolkit, tree


def _settings(proj: Path) -> str:
    return (proj / "demo" / "settings.py").read_text()


def test_add_redis_cache_and_a_plugin_then_manage_check_passes(proj: Path) -> None:
    ran = run_toolkit("add", "cache/redis", cwd=proj)
    assert ran.returncode == 0, ran
    assert (
        ran.stdout.splitlines()[0] == "added battery cache (adapter kvserver) to demo/settings.py:"
    )
    # The template installs the cache app already (its tables come with `migrate`).
    assert "(INSTALLED_APPS)" not in ran.stdout
    assert 'pip install "django-toolkit[kvserver]"' in ran.stderr
    text = _settings(proj)
    assert text.count('"toolkit_batteries.cache"') == 1
    assert '    "cache": {"adapter": "kvserver"},\n}' in text
    ran = run_toolkit("add", "sms_gateway", "--adapter", "acme_sms", cwd=proj)
    assert ran.returncode == 0, ran
    text = _settings(proj)
    assert (
        '"plugins": {' in text and '"sms_gateway": {"adapter": "acme_sms", "options": {}},' in text
    )
    assert 'register_plugin("acme_sms", factory)' in text  # the wiring comment
    check = run_manage(proj, "check", env=base_env(TOOLKIT_ENV="dev"))
    assert check.returncode == 0, check.stderr


def test_add_twice_is_already_configured_and_changes_nothing(proj: Path) -> None:
    assert run_toolkit("add", "lock", cwd=proj).returncode == 0
    after_first = tree(proj)
    ran = run_toolkit("add", "lock", cwd=proj)
    assert ran.returncode == 0
    assert ran.stdout.strip() == (
        "lock is already configured (adapter memory) in demo/settings.py; nothing changed"
    )
    ran = run_toolkit("--json", "add", "lock/memory", cwd=proj)
    data = ran.json["data"]
    assert ran.returncode == 0 and data["changed"] is False and data["edits"] == []
    assert ran.json["breadcrumbs"] == ["toolkit compile", "toolkit doctor"]
    assert tree(proj) == after_first
    # Batteries the template configures in its own shapes count as configured.
    for battery in ("auth", "ratelimit", "db/sqlite"):
        ran = run_toolkit("add", battery, cwd=proj)
        assert ran.returncode == 0 and "already configured" in ran.stdout, ran
    assert tree(proj) == after_first


def test_a_different_adapter_conflicts_unless_forced(proj: Path) -> None:
    assert run_toolkit("add", "cache", cwd=proj).returncode == 0
    before = tree(proj)
    ran = run_toolkit("add", "cache/redis", cwd=proj)
    assert ran.returncode == 1
    assert "already configured with adapter 'memory'" in ran.stderr and "--force" in ran.stderr
    assert tree(proj) == before
    ran = run_toolkit("--json", "add", "cache", "--adapter", "kvserver", "--force", cwd=proj)
    assert ran.returncode == 0, ran
    data = ran.json["data"]
    assert data["changed"] is True and data["adapter"] == "kvserver"
    assert data["edits"] == ["~ \"cache\": ... adapter 'memory' -> 'kvserver'  (TOOLKIT)"]
    assert ran.json["hint"] == 'the kvserver adapter needs: pip install "django-toolkit[kvserver]"'
    assert '"cache": {"adapter": "kvserver"},' in _settings(proj)
    assert _settings(proj).count('"toolkit_batteries.cache"') == 1


def test_add_dry_run_prints_the_edits_and_writes_nothing(proj: Path) -> None:
    before = tree(proj)
    ran = run_toolkit("add", "eventbus/redis", "--dry-run", cwd=proj)
    assert ran.returncode == 0, ran
    assert ran.stdout.splitlines() == [
        'dry run: would edit demo/settings.py: + "toolkit_batteries.eventbus",  (INSTALLED_APPS)',
        'dry run: would edit demo/settings.py: + "eventbus": {"adapter": "kvserver"},  (TOOLKIT)',
    ]
    ran = run_toolkit("--json", "add", "secret_store", "--dry-run", cwd=proj)
    assert ran.json["data"]["plugin"] is True and ran.json["data"]["dryRun"] is True
    assert tree(proj) == before


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["cache/nope"], 3, "unknown adapter 'nope' for cache (valid: db, kvserver, memory"),
        (["cache/kvservr"], 3, 'did you mean "kvserver"'),
        (["cache/redis", "--adapter", "memory"], 2, "name different adapters"),
        (["../x"], 3, "invalid battery name"),
        (["plugins"], 3, "not a battery"),
        (["auth/oidc"], 1, 'TOOLKIT["auth"] is set there (adapter jwt)'),
    ],
)
def test_add_refusals(proj: Path, args: list[str], code: int, message: str) -> None:
    before = tree(proj)
    ran = run_toolkit("add", *args, cwd=proj)
    assert ran.returncode == code, ran
    assert message in ran.stderr
    assert tree(proj) == before


def test_add_json_error_and_outside_a_project(tmp_path: Path, proj: Path) -> None:
    ran = run_toolkit("--json", "add", "cache/nope", cwd=proj)
    assert ran.returncode == 3 and ran.json["ok"] is False and "nope" in ran.json["error"]
    ran = run_toolkit("add", "cache", cwd=tmp_path)
    assert ran.returncode == 1 and "not inside a project" in ran.stderr


def test_add_help() -> None:
    ran = run_toolkit("add", "--help")
    assert ran.returncode == 0 and "--adapter" in ran.stdout and "--force" in ran.stdout

"""``toolkit doctor`` through the installed script: real opens, real failures, no secrets.

A rendered project (its template installs the cache battery's app) is healthy on its
defaults; pointing the cache at a closed port fails that row only, exit 0, and exit 4
under ``--strict``. Secrets given in the environment never appear in any output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import base_env, render_project, run_toolkit
from tests.subprocesses import run_manage

JWT_SECRET = "jwt-secret-Hk2v9-" + "x" * 32
KV_PASSWORD = "kv-pw-Qz7-never-shown"


@pytest.fixture(scope="module")
def project_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Render a project; its template installs ``toolkit_batteries.cache`` already."""
    root = render_project(tmp_path_factory.mktemp("doctor") / "demo")
    assert '"toolkit_batteries.cache",' in (root / "demo" / "settings.py").read_text()
    # The template's job queue lives in the database: migrated, as its README says.
    migrate = [sys.executable, "manage.py", "migrate", "--no-input"]
    subprocess.run(migrate, cwd=root, env=base_env(), check=True, capture_output=True, timeout=120)
    return root


def _env(**extra: str) -> dict[str, str]:
    return base_env(AUTH__DEFAULT__JWT_SECRET=JWT_SECRET, **extra)


BROKEN_CACHE = {
    "CACHE__DEFAULT__ADAPTER": "kvserver",
    "CACHE__DEFAULT__ADDR": f"redis://:{KV_PASSWORD}@127.0.0.1:1/0",
}


def test_default_project_is_healthy(project_dir: Path) -> None:
    text = run_toolkit("doctor", cwd=project_dir, env=_env())
    assert text.returncode == 0, text
    lines = text.stdout.splitlines()
    assert any(line.startswith("config ") and line.endswith("✔") for line in lines)
    for service in ("auth", "cache", "db", "log", "password", "ratelimit/login"):
        assert any(line.split()[:1] == [service] and "✔" in line for line in lines), service
    assert "All 17 services OK" in text.stdout
    assert "✘" not in text.stdout

    body = run_toolkit("doctor", "--json", cwd=project_dir, env=_env()).json
    assert (body["exitCode"], body["ok"]) == (0, True)
    assert body["breadcrumbs"] == ["toolkit config show"]
    data = body["data"]
    assert (data["ok"], data["failed"]) == (17, 0)
    assert data["rows"][0] == {"service": "config", "instance": "", "adapter": "", "ok": True}
    assert {"service": "cache", "instance": "default", "adapter": "memory", "ok": True} in data[
        "rows"
    ]
    assert JWT_SECRET not in text.stdout + text.stderr + str(body)


def test_unreachable_cache_fails_its_row_only_and_strict_exits_4(project_dir: Path) -> None:
    env = _env(**BROKEN_CACHE)
    text = run_toolkit("doctor", cwd=project_dir, env=env)
    assert text.returncode == 0, text
    [cache] = [line for line in text.stdout.splitlines() if line.startswith("cache ")]
    # The product name first (the JSON keeps the canonical adapter name, plus "product").
    assert "redis" in cache and "✘" in cache and "127.0.0.1:1" in cache
    assert "Summary: 16 OK, 1 FAIL" in text.stdout

    strict = run_toolkit("doctor", "--strict", "--json", cwd=project_dir, env=env)
    body = strict.json
    assert (strict.returncode, body["exitCode"], body["ok"]) == (4, 4, False)
    assert body["error"] == "toolkit doctor: 1 of 17 services failed (--strict)"
    [row] = [r for r in body["data"]["rows"] if r["service"] == "cache"]
    assert row["ok"] is False and row["adapter"] == "kvserver" and row["error"]
    assert row["product"] == "redis"

    managed = run_manage(project_dir, "doctor", "--strict", env=env)
    assert managed.returncode == 4, managed.stderr
    assert "1 of 17 services failed (--strict)" in managed.stderr

    for output in (
        text.stdout,
        text.stderr,
        strict.stdout,
        strict.stderr,
        managed.stdout,
        managed.stderr,
    ):
        assert KV_PASSWORD not in output and JWT_SECRET not in output


def test_invalid_configuration_exits_3_naming_the_field_not_the_value(project_dir: Path) -> None:
    env = _env(CACHE__DEFAULT__MAX_ENTRIES="not-a-number-77")
    text = run_toolkit("doctor", cwd=project_dir, env=env)
    body = run_toolkit("doctor", "--json", cwd=project_dir, env=env).json
    assert (text.returncode, body["exitCode"]) == (3, 3)
    assert "max_entries" in text.stderr and "cache" in text.stderr
    assert "not-a-number-77" not in text.stderr + text.stdout + str(body)


def test_outside_a_project_named_services_narrow_the_rows(tmp_path: Path) -> None:
    env = base_env(**BROKEN_CACHE)
    body = run_toolkit(
        "doctor", "--service", "tenant", "--service", "lock", "--json", cwd=tmp_path, env=env
    ).json
    assert body["exitCode"] == 0
    rows = {r["service"]: r for r in body["data"]["rows"]}
    assert rows["tenant"]["ok"] is True and rows["tenant"]["adapter"] == "single"
    assert rows["lock"]["ok"] is True and rows["lock"]["adapter"] == "memory"
    assert "cache" not in rows  # --service narrows the rows

    text = run_toolkit("doctor", "--strict", cwd=tmp_path, env=env)
    assert text.returncode == 4, text  # the environment configures cache: it is checked
    assert "not available in this release" not in text.stdout
    assert "Summary: 1 OK, 1 FAIL" in text.stdout
    assert KV_PASSWORD not in text.stdout + text.stderr
    assert list(tmp_path.iterdir()) == []

    unknown = run_toolkit("doctor", "--service", "cahce", cwd=tmp_path)
    assert unknown.returncode == 2 and 'did you mean "cache"' in unknown.stderr

"""``toolkit config show`` through the installed script: redacted, in and out of a project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import base_env, render_project, run_toolkit
from tests.subprocesses import run_manage

JWT_SECRET = "jwt-secret-Pm4x-" + "y" * 32
KV_PASSWORD = "kv-pw-Lr5-never-shown"
SECRET_ENV = {
    "AUTH__DEFAULT__JWT_SECRET": JWT_SECRET,
    "CACHE__DEFAULT__ADAPTER": "kvserver",
    "CACHE__DEFAULT__ADDR": f"redis://:{KV_PASSWORD}@127.0.0.1:6379/15",
    "QUEUE__DEFAULT__PASSWORD": KV_PASSWORD,
}


@pytest.fixture(scope="module")
def project_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_project(tmp_path_factory.mktemp("config") / "demo")


def test_missing_subcommand_and_unknown_service(tmp_path: Path) -> None:
    ran = run_toolkit("config", cwd=tmp_path)
    assert ran.returncode == 2 and "missing subcommand (want: show)" in ran.stderr
    unknown = run_toolkit("config", "show", "--service", "cahce", "--json", cwd=tmp_path).json
    assert unknown["exitCode"] == 2 and 'did you mean "cache"' in unknown["error"]


def test_outside_a_project_defaults_plus_environment_redacted(tmp_path: Path) -> None:
    env = base_env(**SECRET_ENV)
    text = run_toolkit("config", "show", cwd=tmp_path, env=env)
    assert text.returncode == 0, text
    lines = text.stdout.splitlines()
    # Adapters by product name; a value that is not a default ends with where it came from.
    assert "cache (redis)  [CACHE__DEFAULT__ADAPTER]" in lines
    assert "db (sqlite)" in lines and "log (slog)" in lines
    assert "  addr: redis://:[redacted]@127.0.0.1:6379/15  [CACHE__DEFAULT__ADDR; used]" in lines
    assert "    secret: [redacted]  [AUTH__DEFAULT__JWT_SECRET]" in lines  # auth -> jwt -> secret

    js = run_toolkit("config", "show", "--json", cwd=tmp_path, env=env)
    data = js.json["data"]
    assert js.returncode == 0 and len(data) == 37  # every service, no empty plugins block
    assert data["cache"]["default"]["adapter"] == "kvserver"
    assert data["auth"]["default"]["options"]["jwt"]["secret"] == "[redacted]"
    assert data["queue"]["default"]["options"]["password"] == "[redacted]"

    raw = run_toolkit(
        "config", "show", "--service", "cache", "--format", "json", cwd=tmp_path, env=env
    )
    mapping = json.loads(raw.stdout)
    assert list(mapping) == ["cache"] and mapping["cache"]["default"]["adapter"] == "kvserver"

    for output in (text.stdout, text.stderr, js.stdout, js.stderr, raw.stdout, raw.stderr):
        assert JWT_SECRET not in output and KV_PASSWORD not in output


def test_inside_a_project_uses_its_settings(project_dir: Path) -> None:
    env = base_env(**SECRET_ENV)
    text = run_toolkit(
        "config", "show", "--service", "ratelimit", "--service", "db", cwd=project_dir, env=env
    )
    assert text.returncode == 0, text
    assert "demo.settings + environment" in text.stdout
    lines = text.stdout.splitlines()
    for header in (
        "ratelimit (memory)",
        "ratelimit/login (memory)  [settings.TOOLKIT]",
        "ratelimit/register (memory)  [settings.TOOLKIT]",
        "db (sqlite)  [settings.TOOLKIT]",
    ):
        assert header in lines
    assert "  burst: 5  [settings.TOOLKIT]" in lines  # the login instance's, from settings

    body = run_toolkit("config", "show", "--json", cwd=project_dir, env=env).json
    assert body["exitCode"] == 0
    assert body["data"]["db"]["default"]["options"]["path"].endswith("db.sqlite3")
    assert body["data"]["cache"]["default"]["adapter"] == "kvserver"
    assert JWT_SECRET not in text.stdout + json.dumps(body)

    managed = run_manage(project_dir, "config_show", "--service", "auth", env=env)
    assert managed.returncode == 0, managed.stderr
    assert "auth (jwt)" in managed.stdout
    assert JWT_SECRET not in managed.stdout + managed.stderr


@pytest.mark.parametrize("inside", [False, True], ids=["outside", "inside"])
def test_invalid_configuration_exits_3_without_the_value(
    inside: bool, project_dir: Path, tmp_path: Path
) -> None:
    env = base_env(CACHE__DEFAULT__SWEEP_INTERVAL="5 parsecs-secretish")
    cwd = project_dir if inside else tmp_path
    text = run_toolkit("config", "show", cwd=cwd, env=env)
    body = run_toolkit("config", "show", "--json", cwd=cwd, env=env).json
    assert (text.returncode, body["exitCode"]) == (3, 3), text
    assert "cache.default" in text.stderr and '"sweep_interval"' in text.stderr
    assert "parsecs-secretish" not in text.stdout + text.stderr + json.dumps(body)

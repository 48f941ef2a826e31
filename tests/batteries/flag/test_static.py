"""What only the static adapter has: the file format, reloading, cross-process stability."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest

from tests.subprocesses import run_python
from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.flag.adapters.static import StaticFlag

from ..cache.helpers import FakeClock

ROOT = Path(__file__).resolve().parents[3]


def write(path: Path, flags: dict) -> Path:
    path.write_text(json.dumps({"flags": flags}), encoding="utf-8")
    return path


def test_no_path_means_no_flags():
    flag = Container(Config.load({}, {})).flag()
    assert isinstance(flag, StaticFlag) and flag.names() == []
    assert flag.enabled("anything") is False and flag.enabled("anything", default=True)


def test_toml_files(tmp_path):
    path = tmp_path / "flags.toml"
    path.write_text(
        '[flags]\nbeta = true\n[flags.theme]\nvalue = "dark"\n'
        '[flags.theme.tenants]\nacme = { value = "light" }\n',
        encoding="utf-8",
    )
    flag = StaticFlag(path)
    assert flag.enabled("beta") and flag.value("theme") == "dark"
    assert flag.value("theme", tenant="acme") == "light"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "is not valid JSON"),
        ('{"flagz": {}}', 'unknown top-level key "flagz"'),
        ('{"flags": {"x": {"rolout": 5}}}', 'flag "x": unknown key "rolout"'),
        ('{"flags": {"x": {"rollout": 101}}}', '"rollout" must be a number from 0 to 100'),
        ('{"flags": {"x": {"enabled": "yes"}}}', '"enabled" must be true or false'),
        ('{"flags": {"x": {"tenants": {"acme": {"colour": 1}}}}}', 'unknown key "colour"'),
    ],
)
def test_a_bad_file_fails_the_open_naming_the_field(tmp_path, content, reason):
    path = tmp_path / "flags.json"
    path.write_text(content, encoding="utf-8")
    block = {"adapter": "static", "options": {"static": {"path": str(path)}}}
    with pytest.raises(InvalidOptionsError) as caught:
        Container(Config.load({"flag": block}, {})).flag()
    assert 'flag.default: option "static.path"' in str(caught.value)
    assert reason in str(caught.value)


def test_a_missing_file_fails_the_open_and_the_check(tmp_path):
    block = {"adapter": "static", "options": {"static": {"path": str(tmp_path / "no.json")}}}
    config = Config.load({"flag": block}, {})
    with pytest.raises(InvalidOptionsError, match=r'option "static.path" names a file'):
        Container(config).flag()
    assert [m.id for m in service_checks("flag", config)] == ["toolkit_flag.E002"]


def test_the_file_is_reloaded_when_it_changes(tmp_path):
    path = write(tmp_path / "flags.json", {"beta": False})
    clock = FakeClock()
    flag = StaticFlag(path, reload=True, clock=clock)
    assert flag.enabled("beta") is False
    write(path, {"beta": True, "gamma": "on"})
    assert flag.enabled("beta") is False  # not looked at before the interval
    clock.advance(1.1)
    assert flag.enabled("beta") is True and flag.names() == ["beta", "gamma"]
    # An atomic replace (new inode) counts as a change too.
    replacement = write(tmp_path / "next.json", {"beta": False})
    os.replace(replacement, path)
    clock.advance(1.1)
    assert flag.enabled("beta") is False


def test_without_reload_the_file_is_read_once(tmp_path):
    path = write(tmp_path / "flags.json", {"beta": False})
    clock = FakeClock()
    flag = StaticFlag(path, reload=False, clock=clock)
    write(path, {"beta": True, "more": True})
    clock.advance(10)
    assert flag.enabled("beta") is False


def test_reload_costs_at_most_one_stat_per_interval(tmp_path, monkeypatch):
    path = write(tmp_path / "flags.json", {"beta": True})
    clock = FakeClock()
    flag = StaticFlag(path, reload=True, clock=clock)
    calls = []
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda *a, **k: calls.append(a) or real_stat(*a, **k))
    for _ in range(10_000):
        assert flag.enabled("beta", subject="u")
    assert calls == []
    clock.advance(1.1)
    for _ in range(10_000):
        flag.enabled("beta")
    assert len(calls) == 1


def test_a_broken_reload_keeps_the_previous_flags_and_logs(tmp_path, caplog):
    path = write(tmp_path / "flags.json", {"beta": True})
    clock = FakeClock()
    flag = StaticFlag(path, reload=True, clock=clock)
    path.write_text('{"flags": {"beta": {"rollout": "SECRET-ish"}}} trailing', encoding="utf-8")
    clock.advance(1.1)
    with caplog.at_level(logging.ERROR, logger="toolkit.flag"):
        assert flag.enabled("beta") is True
    assert "keeping the flags loaded before" in caplog.text
    assert "SECRET-ish" not in caplog.text
    write(path, {"beta": False})
    clock.advance(1.1)
    assert flag.enabled("beta") is False


def test_raising_a_rollout_keeps_the_subjects_already_in(tmp_path):
    subjects = [f"s{i}" for i in range(5000)]
    ten = StaticFlag(write(tmp_path / "a.json", {"f": {"rollout": 10}}))
    twenty = StaticFlag(write(tmp_path / "b.json", {"f": {"rollout": 20}}))
    first = {s for s in subjects if ten.enabled("f", subject=s)}
    second = {s for s in subjects if twenty.enabled("f", subject=s)}
    assert first < second
    assert 0.08 < len(first) / 5000 < 0.12 and 0.18 < len(second) / 5000 < 0.22


def test_seeds_make_flags_independent(tmp_path):
    flag = StaticFlag(
        write(tmp_path / "f.json", {"a": {"rollout": 50}, "b": {"rollout": 50, "seed": "other"}})
    )
    subjects = [f"s{i}" for i in range(2000)]
    a = [flag.enabled("a", subject=s) for s in subjects]
    b = [flag.enabled("b", subject=s) for s in subjects]
    assert a != b
    assert 0.4 < sum(x == y for x, y in zip(a, b, strict=True)) / 2000 < 0.6


def test_answers_are_the_same_in_another_process(tmp_path):
    path = write(tmp_path / "f.json", {"f": {"rollout": 33.3}})
    code = (
        "import json, sys\n"
        "from toolkit_batteries.flag.adapters.static import StaticFlag\n"
        "flag = StaticFlag(sys.argv[1])\n"
        "print(json.dumps([flag.enabled('f', subject=f'u{i}') for i in range(3000)]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = json.loads(run_python(code, cwd=ROOT, env=env, args=[str(path)]))
    here = StaticFlag(path)
    assert other == [here.enabled("f", subject=f"u{i}") for i in range(3000)]
    assert sys.flags.hash_randomization  # this process hashes str differently

"""Login benchmarks: the reference application's ``POST /api/login`` and the hash under it.

With the default argon2id parameters (t=3, m=64 MiB, p=4) the password hash dominates a
login, so the figures compare each path with one bare verification measured in the same
run:

* a successful login against one ``services.password().verify()``;
* a login for an unknown email against a login with a wrong password (they must cost the
  same, or response times would tell which emails have accounts);
* the battery's ``hash`` and ``verify`` against argon2-cffi called directly.

The login runs in the rendered project template (a fresh interpreter, Django's test
``Client``, the project's own settings and SQLite file), exactly as a user would get it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.foundation import Result

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 9

_LOGIN_SCRIPT = r"""
import json, os, statistics, sys, time
sys.path.insert(0, os.getcwd())
import django
django.setup()
from django.core.management import call_command
from django.test import Client
from toolkit_batteries import services

call_command("migrate", verbosity=0, interactive=False)
rounds = int(sys.argv[1])
body = lambda email, pw: json.dumps({"email": email, "password": pw})
first = Client(REMOTE_ADDR="10.0.0.1")
first.post("/api/register", body("bench@example.com", "bench password"),
           content_type="application/json")
hasher = services.password()
encoded = hasher.hash("bench password")

def timed(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000

ok, wrong, unknown, verify = [], [], [], []
statuses = set()
for i in range(rounds):
    # A fresh client address per request: the login rate limit must not interfere.
    c = Client(REMOTE_ADDR=f"10.1.{i // 250}.{i % 250}")
    def login(email, pw):
        statuses.add(c.post("/api/login", body(email, pw),
                            content_type="application/json").status_code)
    ok.append(timed(lambda: login("bench@example.com", "bench password")))
    wrong.append(timed(lambda: login("bench@example.com", "not it")))
    unknown.append(timed(lambda: login(f"nobody{i}@example.com", "not it")))
    verify.append(timed(lambda: hasher.verify("bench password", encoded)))
print(json.dumps({"ok": statistics.median(ok), "wrong": statistics.median(wrong),
                  "unknown": statistics.median(unknown), "verify": statistics.median(verify),
                  "statuses": sorted(statuses)}))
"""


def _render(target: Path) -> None:
    subprocess.run(
        [
            str(Path(sys.executable).parent / "django-admin"),
            "startproject",
            f"--template={ROOT / 'project_template'}",
            "--extension=py,toolkit,md",
            "benchproj",
            str(target),
        ],
        check=True,
        capture_output=True,
        env=_env(),
    )


def _env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DB_", "LOG_", "AUTH_", "PASSWORD_", "RATELIMIT_"))
        and k not in ("DJANGO_SETTINGS_MODULE", "TZ", "TOOLKIT_ENV", "DJANGO_DEBUG")
    }
    return env | {
        "DJANGO_SETTINGS_MODULE": "benchproj.settings",
        "DJANGO_ALLOWED_HOSTS": "testserver",
        "AUTH__DEFAULT__JWT_SECRET": "bench-secret-" + "x" * 40,
        # A production project (no TOOLKIT_ENV) needs its own key; the test client speaks
        # plain HTTP, which production would redirect.
        "DJANGO_SECRET_KEY": "bench-key-" + "y" * 50,
        "DJANGO_SECURE_SSL_REDIRECT": "0",
    }


_cache: dict[str, float] = {}


def _login_figures() -> dict[str, float]:
    """Render the template once and measure the login paths; cached for both benches."""
    if not _cache:
        with tempfile.TemporaryDirectory(prefix="toolkit-bench-login-") as tmp:
            project = Path(tmp) / "proj"
            project.mkdir()
            _render(project)
            out = subprocess.run(
                [sys.executable, "-c", _LOGIN_SCRIPT, str(ROUNDS)],
                cwd=project,
                env=_env(),
                capture_output=True,
                text=True,
                check=True,
            )
            data = json.loads(out.stdout.strip().splitlines()[-1])
            if data.pop("statuses") != [200, 401]:
                raise RuntimeError("the login benchmark got unexpected statuses")
            _cache.update(data)
    return _cache


def bench_login_latency() -> Result:
    """Time a successful login against one bare argon2id verification."""
    figures = _login_figures()
    ratio = figures["ok"] / figures["verify"]
    return Result(
        "POST /api/login (default argon2id) vs 1 verify",
        figures["ok"],
        figures["verify"],
        "ms",
        "<= 1.5x (the hash dominates)",
        ratio <= 1.5,
    )


def bench_login_unknown_vs_wrong() -> Result:
    """Compare a login for an unknown email with one with a wrong password."""
    figures = _login_figures()
    ratio = figures["unknown"] / figures["wrong"]
    return Result(
        "login: unknown email vs wrong password",
        figures["unknown"],
        figures["wrong"],
        "ms",
        "0.8x-1.25x (no account enumeration)",
        0.8 <= ratio <= 1.25,
    )


def _paired_medians(ours, base, rounds: int = ROUNDS) -> tuple[float, float]:
    """Return the median ms of ``ours`` and ``base``, run alternately so noise hits both."""
    a, b = [], []
    for _ in range(rounds):
        for fn, samples in ((ours, a), (base, b)):
            start = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(a), statistics.median(b)


def _raw_and_battery() -> tuple[object, object, str]:
    import argon2

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    battery = Container(Config.load({}, {})).password()
    raw = argon2.PasswordHasher(time_cost=3, memory_cost=65536, parallelism=4)
    return battery, raw, raw.hash("bench password")


def bench_hash() -> Result:
    """Time ``services.password().hash`` against argon2-cffi's own ``hash``."""
    battery, raw, _ = _raw_and_battery()
    ours, base = _paired_medians(
        lambda: battery.hash("bench password"), lambda: raw.hash("bench password")
    )
    return Result(
        "password.hash (t=3, m=64MiB, p=4)",
        ours,
        base,
        "ms",
        "<= 1.05x argon2-cffi",
        ours / base <= 1.05,
    )


def bench_verify() -> Result:
    """Time ``services.password().verify`` against argon2-cffi's own ``verify``."""
    battery, raw, encoded = _raw_and_battery()
    ours, base = _paired_medians(
        lambda: battery.verify("bench password", encoded),
        lambda: raw.verify(encoded, "bench password"),
    )
    return Result(
        "password.verify (t=3, m=64MiB, p=4)",
        ours,
        base,
        "ms",
        "<= 1.05x argon2-cffi",
        ours / base <= 1.05,
    )


BENCHMARKS = [bench_hash, bench_verify, bench_login_latency, bench_login_unknown_vs_wrong]


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    for bench in BENCHMARKS:
        print(bench().line(), flush=True)

"""Foundation benchmarks: accessor cost, import + setup cost, configuration load time.

Each measurement runs its baseline in the same process (or the same kind of subprocess)
right beside it, so the ratio holds on a slow or busy machine too.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import timeit
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Modules of vendor SDKs that an idle ``django.setup()`` must not import.
VENDOR_MODULES = (
    "redis",
    "psycopg",
    "psycopg_pool",
    "boto3",
    "botocore",
    "storages",
    "celery",
    "kombu",
    "structlog",
    "argon2",
    "jwt",
    "openai",
    "anthropic",
    "google.genai",
    "httpx2",
    "stripe",
    "paddle_billing",
    "django_tasks",
    "selenium",
    "playwright",
    "cryptography",
    "hvac",
    "posthog",
    "cloudflare",
    "httpx",
    "httpcore",
    "casbin",
    "anymail",
    "aiosmtpd",
    "opentelemetry",
    "PIL",
    "sqlite_vec",
    "sqlean",
    "qdrant_client",
    "numpy",
    "weasyprint",
    "pydyf",
    "meilisearch",
    "twilio",
)


@dataclass
class Result:
    """One benchmark line: the measured figure, its baseline, and the target it answers."""

    name: str
    value: float
    baseline: float | None
    unit: str
    target: str
    met: bool
    #: How figure and baseline are written (``",.0f"`` for large rates: ``778,502``).
    number: str = ".2f"

    def line(self) -> str:
        """Render the result as one aligned line."""
        base = (
            f"  baseline {self.baseline:{self.number}} {self.unit}"
            if self.baseline is not None
            else ""
        )
        ratio = f"  ratio {self.value / self.baseline:.2f}x" if self.baseline else ""
        mark = "ok  " if self.met else "MISS"
        figure = f"{self.value:12{self.number}} {self.unit}"
        return f"{mark} {self.name:<44} {figure}{base}{ratio}  (target {self.target})"


def _best_ns(stmt: str, globals_: dict, number: int = 1_000_000, repeat: int = 7) -> float:
    return min(timeit.repeat(stmt, globals=globals_, number=number, repeat=repeat)) / number * 1e9


def bench_accessor() -> Result:
    """Time ``container.log()`` on an opened service against a plain attribute read."""
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    container = Container(Config.load({"log": {"adapter": "noop"}}, {}))
    service = container.log()

    class Holder:
        pass

    holder = Holder()
    holder.log = service
    accessor = _best_ns("c.log()", {"c": container})
    attribute = _best_ns("h.log", {"h": holder})
    container.close()
    ratio = accessor / attribute
    return Result(
        "accessor call vs attribute read", accessor, attribute, "ns", "<= 3x", ratio <= 3.0
    )


_SETUP = """
import sys, time, json
t0 = time.perf_counter()
import django
from django.conf import settings
settings.configure(INSTALLED_APPS={apps!r}, DATABASES={{}}, USE_TZ=True)
django.setup()
{extra}
elapsed = time.perf_counter() - t0
print(json.dumps({{"ms": elapsed * 1000, "vendors": [m for m in {vendors!r} if m in sys.modules]}}))
"""


def _setup_ms(
    apps: list[str], env: dict[str, str], extra: str = "", runs: int = 3
) -> tuple[float, list[str]]:
    """Return the median setup time of fresh interpreters, and the vendor SDKs they imported."""
    code = _SETUP.format(apps=apps, extra=extra, vendors=VENDOR_MODULES)
    times, vendors = [], []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env=env,
        )
        data = json.loads(out.stdout)
        times.append(data["ms"])
        vendors = data["vendors"]
    return statistics.median(times), vendors


def bench_setup() -> Result:
    """Time ``django.setup()`` with every battery app installed against bare Django."""
    from toolkit_batteries.core.catalog import SERVICES

    django_apps = ["django.contrib.contenttypes", "django.contrib.auth"]
    batteries = [
        spec.package
        for spec in SERVICES.values()
        if (ROOT / "toolkit_batteries" / spec.name / "apps.py").exists()
    ]
    # Bytecode is compiled once and may be written, as on an installed system: a machine
    # with PYTHONDONTWRITEBYTECODE would otherwise time the compiler, not the import.
    compileall.compile_dir(ROOT / "toolkit_batteries", quiet=1)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    # Interleave the two kinds of run so that machine noise hits both alike.
    bare_runs, our_runs, vendors = [], [], []
    for _ in range(5):
        bare_runs.append(_setup_ms(django_apps, env)[0])
        ours_ms, vendors = _setup_ms(
            [*django_apps, "toolkit_batteries", *batteries],
            env,
            extra="import toolkit_batteries.services",
        )
        our_runs.append(ours_ms)
    bare, ours = statistics.median(bare_runs), statistics.median(our_runs)
    added = ours - bare
    name = f"django.setup() + {len(batteries)} battery apps (added)"
    result = Result(
        name, added, bare, "ms", "adds < 50 ms, no vendor SDK", added < 50 and not vendors
    )
    if vendors:
        result.name += f" [imported: {', '.join(vendors)}]"
    return result


def bench_config_load() -> Result:
    """Time ``Config.load`` with 100 environment variables (a third of them unrelated)."""
    from toolkit_batteries.core.config import Config

    environ: dict[str, str] = {}
    for i in range(40):
        environ[f"CACHE__INST{i}__MAX_ENTRIES"] = str(100 + i)
    for i in range(20):
        environ[f"RATELIMIT__R{i}__RATE"] = "5.5"
    for i in range(10):
        environ[f"QUEUE__Q{i}__VISIBILITY_TIMEOUT"] = "45s"
    for i in range(30):
        environ[f"UNRELATED_VARIABLE_{i}"] = "x"
    settings = {"log": {"adapter": "slog", "options": {"min_level": 1}}}
    Config.load(settings, environ)  # warm the per-class caches, as a running process has
    runs = [
        timeit.timeit(lambda: Config.load(settings, environ), number=1) * 1000 for _ in range(50)
    ]
    value = statistics.median(runs)
    return Result("Config.load with 100 env variables", value, None, "ms", "< 5 ms", value < 5)


BENCHMARKS = (bench_accessor, bench_setup, bench_config_load)

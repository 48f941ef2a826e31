"""``toolkit generate``: the nine subcommands, their dry runs, guards and generated code.

The project is rendered once per module and copied per test. Generated Python is held to
what the repository holds itself to: it imports in the project (``manage.py shell``),
passes ``ruff check`` and is left unchanged by ``ruff format``; generated schema passes
the compiler's check.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.subprocesses import run_manage

from .conftest import REPO, base_env, run_toolkit, tree

RUFF = Path(sys.executable).parent / "ruff"


def _manage(proj: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_manage(proj, *args, env=base_env(TOOLKIT_ENV="dev"))


def _ruff_clean(root: Path, *paths: Path) -> None:
    """Assert ``ruff check`` and ``ruff format --check`` pass with the repository's rules.

    Ruff runs from ``root`` (the project), so it sees ``toolkit_batteries`` as a
    third-party package there, as it does in a user's project.
    """
    config = str(REPO / "pyproject.toml")
    files = [str(p.relative_to(root)) for p in paths]
    lint = subprocess.run(
        [str(RUFF), "check", "--config", config, "--no-cache", *files],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout
    fmt = subprocess.run(
        [str(RUFF), "format", "--config", config, "--no-cache", "--check", "--diff", *files],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


# ---------------------------------------------------------------------- the group


def test_generate_without_subcommand_is_a_usage_error(proj: Path) -> None:
    ran = run_toolkit("generate", cwd=proj)
    assert ran.returncode == 2
    assert ran.stderr.splitlines()[0] == (
        "toolkit generate: missing subcommand (want: module, entity, job, schedule, server, "
        "worker, deploy, seed, tinker, adapter)"
    )
    ran = run_toolkit("--json", "generate", cwd=proj)
    assert ran.json["exitCode"] == 2 and "missing subcommand" in ran.json["error"]
    assert run_toolkit("generate", "--help").returncode == 0
    for sub in ("module", "entity", "job", "schedule", "adapter"):
        assert run_toolkit("generate", sub, "--help").returncode == 0


def test_generate_outside_a_project_fails(tmp_path: Path) -> None:
    ran = run_toolkit("generate", "server", cwd=tmp_path)
    assert ran.returncode == 1 and "not inside a project" in ran.stderr
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------- dry runs


@pytest.mark.parametrize(
    "args",
    [
        ["module", "billing"],
        ["entity", "app", "Invoice", "--field", "number:string"],
        ["job", "api", "NightlyReport"],
        ["server"],
        ["worker"],
        ["seed"],
        ["tinker"],
        ["adapter", "cache", "acme", "--field", "endpoint:str"],
    ],
)
def test_every_subcommand_dry_run_writes_nothing(proj: Path, args: list[str]) -> None:
    before = tree(proj)
    ran = run_toolkit("generate", *args, "--dry-run", cwd=proj)
    assert ran.returncode == 0, ran
    assert "dry run: would " in ran.stdout
    assert tree(proj) == before


def test_schedule_dry_run_writes_nothing(proj: Path) -> None:
    assert run_toolkit("generate", "job", "api", "Report", cwd=proj).returncode == 0
    before = tree(proj)
    args = ["generate", "schedule", "api", "Nightly", "--cron", "0 3 * * *", "--dispatch", "report"]
    ran = run_toolkit(*args, "--dry-run", cwd=proj)
    assert ran.returncode == 0, ran
    assert ran.stdout.splitlines() == [
        "  schedule Nightly {",
        '    cron: "0 3 * * *"',
        "    dispatch: Report()",
        "  }",
        "dry run: would append to schema/app.toolkit",
    ]
    assert tree(proj) == before


# ---------------------------------------------------------------------- schema


def test_module_then_entities_keep_the_schema_valid(proj: Path) -> None:
    from toolkit_codegen import check_paths

    ran = run_toolkit("generate", "module", "billing", cwd=proj)
    assert ran.returncode == 0, ran
    assert ran.stdout.splitlines()[0] == "created schema/billing/billing.toolkit"
    stub = (proj / "schema/billing/billing.toolkit").read_text()
    assert stub.startswith("// Module billing") and stub.count("\n") == 1
    ran = run_toolkit(
        "--json",
        "generate",
        "entity",
        "billing",
        "Invoice",
        "--field",
        "number:string",
        "--field",
        "total:int64",
        "--field",
        "paid_at:timestamp?",
        cwd=proj,
    )
    assert ran.returncode == 0, ran
    data = ran.json["data"]
    assert data["files"] == ["schema/billing/billing.toolkit"] and data["entity"] == "Invoice"
    assert data["fields"][2] == {"name": "paid_at", "type": "timestamp?"}
    assert (proj / "schema/billing/billing.toolkit").read_text() == stub + (
        "\nentity Invoice {\n"
        "  id: uuid @primary\n"
        "  number: string\n"
        "  total: int64\n"
        "  paid_at: timestamp?\n"
        "  created_at: timestamp @default(now())\n"
        "}\n"
    )
    ran = run_toolkit("generate", "entity", "app", "Widget", "--field", "name:string", cwd=proj)
    assert ran.returncode == 0 and "appended to schema/app.toolkit" in ran.stdout
    result = check_paths([proj / "schema"])
    assert result.ok, [str(d) for d in result.diagnostics]
    assert {e.name for e in result.schema.entities} == {"Note", "Invoice", "Widget"}
    assert result.schema.module_of("Invoice").name == "billing"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["module", "../x"], "invalid module name '../x'"),
        (["module", "app"], "root module"),
        (["module", "v1"], "API versions"),
        (["entity", "app", "Note"], "'Note' is already declared (module default)"),
        (["entity", "app", "invoice"], "PascalCase"),
        (["entity", "app", "Bad", "--field", "x:strin"], 'did you mean "string"'),
        (["entity", "app", "Bad", "--field", "id:uuid"], "given twice"),
        (["entity", "app", "Bad", "--field", "service:string"], "reserved"),
        (["entity", "missing", "Bad"], "no module 'missing'"),
        (["entity", "../x", "Bad"], "invalid module name"),
    ],
)
def test_schema_generators_refuse_bad_input(proj: Path, args: list[str], message: str) -> None:
    before = tree(proj)
    ran = run_toolkit("generate", *args, cwd=proj)
    assert ran.returncode == 3, ran
    assert message in ran.stderr
    assert tree(proj) == before


def test_entity_is_not_written_when_the_schema_would_not_compile(proj: Path) -> None:
    (proj / "schema" / "broken.toolkit").write_text("entity Broken {\n  id: nosuchtype\n}\n")
    before = tree(proj)
    ran = run_toolkit("--json", "generate", "entity", "app", "Fine", cwd=proj)
    assert ran.returncode == 3
    assert "schema/broken.toolkit:2:" in ran.stderr
    assert any("broken.toolkit" in d for d in ran.json["data"]["diagnostics"])
    assert tree(proj) == before


# ---------------------------------------------------------------------- jobs and schedules


def test_job_and_schedule_refusals(proj: Path) -> None:
    assert run_toolkit("generate", "job", "api", "Report", cwd=proj).returncode == 0
    args = ["generate", "job", "app", "WithArgs", "--param", "x:int32"]
    assert run_toolkit(*args, cwd=proj).returncode == 0
    before = tree(proj)
    cases = [
        (["job", "api", "Report"], "already declared"),
        (["job", "api", "Other", "--queue", "a.b"], "invalid queue name"),
        (["job", "nope", "Other"], "no module 'nope'"),
        (["job", "../api", "Other"], "invalid module name"),
        (["job", "api", "Other", "--param", "x:nosuch"], "nosuch"),
        (["schedule", "api", "S", "--cron", "0 3 * *", "--dispatch", "report"], "want 5 fields"),
        (["schedule", "api", "S", "--cron", "61 * * * *", "--dispatch", "report"], "0-59"),
        (["schedule", "api", "S", "--cron", "0 3 * * '", "--dispatch", "report"], "quotes"),
        (["schedule", "api", "S", "--cron", "0 3 * * xyz", "--dispatch", "report"], "xyz"),
        (["schedule", "api", "S", "--cron", "0 3 * * *", "--dispatch", "nope"], "no job 'Nope'"),
        (["schedule", "api", "S", "--cron", "0 3 * * *", "--dispatch", "with_args"], "param"),
        (["schedule", "api", "S", "--cron", "* * * * *", "--dispatch", 'WithArgs("x")'], "x"),
        (["schedule", "accounts", "S", "--cron", "* * * * *", "--dispatch", "report"], "no module"),
    ]
    for args, message in cases:
        ran = run_toolkit("generate", *args, cwd=proj)
        assert ran.returncode == 3, (args, ran)
        assert message in ran.stderr, (args, ran)
    assert tree(proj) == before


def test_job_and_schedule_are_schema_declarations_compile_turns_into_code(proj: Path) -> None:
    steps = [
        ["job", "api", "NightlyReport", "--queue", "reports", "--param", "day:string"],
        ["job", "app", "cleanup"],
        ["schedule", "api", "Nightly", "--cron", "0 3 * * *", "--dispatch", 'NightlyReport("x")'],
        ["schedule", "app", "Weekdays", "--cron", "*/15 9-17 * * mon-fri", "--dispatch", "cleanup"],
    ]
    for args in steps:
        ran = run_toolkit("generate", *args, cwd=proj)
        assert ran.returncode == 0, (args, ran)
    schema = (proj / "schema" / "app.toolkit").read_text()
    assert "job NightlyReport(day: string) {\n  queue: reports\n}\n" in schema
    assert "job Cleanup()\n" in schema
    assert (
        'schedule Weekdays {\n  cron: "*/15 9-17 * * mon-fri"\n  dispatch: Cleanup()\n}\n' in schema
    )
    assert not (proj / "api" / "jobs.py").exists()  # the compiler writes the stubs
    assert _manage(proj, "compile_schema").returncode == 0
    jobs = (proj / "api" / "jobs.py").read_text()
    assert "def nightly_report(day: str) -> None:" in jobs and "def cleanup() -> None:" in jobs
    shell = _manage(
        proj,
        "shell",
        "-c",
        "import api.jobs, api.schedules\n"
        "print(sorted(s.name for s in api.schedules.SCHEDULES), api.jobs.nightly_report.queue)",
    )
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.strip().splitlines()[-1] == "['Nightly', 'Weekdays'] reports"


def test_generated_code_imports_runs_and_is_ruff_clean(proj: Path) -> None:
    """job + schedule + seed + tinker + server + worker + adapter, then use them for real."""
    steps = [
        ["job", "api", "NightlyReport", "--queue", "reports"],
        ["job", "api", "Cleanup"],
        ["schedule", "api", "Nightly", "--cron", "0 3 * * *", "--dispatch", "NightlyReport"],
        ["schedule", "api", "Weekdays", "--cron", "*/15 9-17 * * mon-fri", "--dispatch", "cleanup"],
    ]
    for args in steps:
        ran = run_toolkit("generate", *args, cwd=proj)
        assert ran.returncode == 0, (args, ran)
    # The schema declares them; compile writes api/jobs.py and api/schedules.py.
    assert _manage(proj, "compile_schema").returncode == 0
    steps = [
        ["seed"],
        ["tinker"],
        ["server"],
        ["worker"],
        ["adapter", "cache", "acme", "--field", "endpoint:str", "--field", "retries:int?"],
    ]
    said = {}
    for args in steps:
        ran = run_toolkit("generate", *args, cwd=proj)
        assert ran.returncode == 0, (args, ran)
        said[args[0]] = ran.stdout
    assert "kept api/jobs.py" in said["worker"]  # `worker` keeps the compiler's jobs module
    assert (proj / "Procfile").read_text() == (
        "web: toolkit serve\nworker: toolkit queue:work\nscheduler: toolkit schedule:run\n"
    )
    conf = (proj / "gunicorn.conf.py").read_text()
    assert (
        "graceful_timeout = 30" in conf and "'8080'" in conf and 'accesslog = "/dev/stderr"' in conf
    )
    seeds = (proj / "api" / "seeds.py").read_text()
    assert 'models.Note.objects.get_or_create(\n        title="Example note",' in seeds
    _ruff_clean(
        proj,
        proj / "api" / "seeds.py",
        proj / "tinker.py",
        proj / "gunicorn.conf.py",
        proj / "adapters",
    )
    assert _manage(proj, "compile_schema").returncode == 0
    assert _manage(proj, "migrate", "-v", "0").returncode == 0
    script = (
        "import api.jobs, api.schedules\n"
        "from api import seeds\n"
        "from api.models import Note\n"
        "from toolkit_batteries.core.loading import resolve_adapter\n"
        "from toolkit_batteries.scheduler import Schedule\n"
        "seeds.run(); seeds.run()\n"
        "names = {}\n"
        "exec(open('tinker.py').read(), names)\n"
        "print(len(api.schedules.SCHEDULES), api.jobs.nightly_report.queue, Note.objects.count(),"
        " names['model']('Note') is Note, all(isinstance(s, Schedule) for s in"
        " api.schedules.SCHEDULES), resolve_adapter('cache', 'adapters.cache.acme.AcmeCache')[0])\n"
        "import runpy; conf = runpy.run_path('gunicorn.conf.py')\n"
        "print(conf['bind'], conf['workers'], conf['wsgi_app'])\n"
    )
    shell = _manage(proj, "shell", "-c", script)
    assert shell.returncode == 0, shell.stderr
    lines = shell.stdout.strip().splitlines()[-2:]
    assert lines == [
        "2 reports 1 True True adapters.cache.acme.AcmeCache",
        "0.0.0.0:8080 2 demo.wsgi:application",
    ]


# ---------------------------------------------------------------------- project files


@pytest.mark.parametrize(
    ("sub", "path"),
    [("server", "gunicorn.conf.py"), ("tinker", "tinker.py"), ("seed", "api/seeds.py")],
)
def test_files_are_not_overwritten_without_force(proj: Path, sub: str, path: str) -> None:
    target = proj / path
    target.write_text("# mine\n")
    ran = run_toolkit("generate", sub, cwd=proj)
    assert ran.returncode == 1 and "already exists" in ran.stderr and "--force" in ran.stderr
    assert target.read_text() == "# mine\n"
    ran = run_toolkit("--json", "generate", sub, "--force", cwd=proj)
    assert ran.returncode == 0, ran
    assert ran.json["data"]["files"] == [path]
    assert target.read_text() != "# mine\n"


def test_worker_keeps_an_existing_jobs_module(proj: Path) -> None:
    (proj / "api" / "jobs.py").write_text("# mine\n")
    ran = run_toolkit("generate", "worker", cwd=proj)
    assert ran.returncode == 0, ran
    assert "kept api/jobs.py" in ran.stdout
    assert (proj / "api" / "jobs.py").read_text() == "# mine\n"
    assert run_toolkit("generate", "worker", cwd=proj).returncode == 1


def test_seed_for_an_app_without_schema_models_is_a_logged_no_op(proj: Path) -> None:
    ran = run_toolkit("generate", "seed", "--app", "accounts", cwd=proj)
    assert ran.returncode == 0, ran
    text = (proj / "accounts" / "seeds.py").read_text()
    assert "def run() -> None:" in text and 'logger.info("seed: nothing to seed' in text


# ---------------------------------------------------------------------- adapters


def test_adapter_prints_the_settings_snippet(proj: Path) -> None:
    ran = run_toolkit("--json", "generate", "adapter", "lock", "acme", "--dir", "lib/ext", cwd=proj)
    assert ran.returncode == 0, ran
    data = ran.json["data"]
    assert data["dotted"] == "lib.ext.lock.acme.AcmeLock"
    assert data["settings"] == {"lock": {"adapter": "lib.ext.lock.acme.AcmeLock"}}
    assert "_try_acquire" in data["methods"]
    assert data["files"] == [
        "lib/__init__.py",
        "lib/ext/__init__.py",
        "lib/ext/lock/__init__.py",
        "lib/ext/lock/acme.py",
    ]
    ran = run_toolkit("generate", "adapter", "cache", "acme", cwd=proj)
    assert (
        'select it in settings: TOOLKIT = {"cache": {"adapter": "adapters.cache.acme.AcmeCache"}}'
        in ran.stdout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cache", "../x"], "invalid adapter name '../x'"),
        (["cache", "x", "--dir", "../outside"], "path escapes the target directory"),
        (["cache", "x", "--dir", "/tmp"], "path escapes the target directory"),
        (["cache", "x", "--dir", "my-adapters"], "identifier"),
        (["plugins", "x"], "batteries with one: ai, analytics, auth"),
        (["cache", "x", "--field", "n:list"], "invalid type 'list'"),
    ],
)
def test_adapter_refusals(proj: Path, args: list[str], message: str) -> None:
    before = tree(proj.parent)
    ran = run_toolkit("generate", "adapter", *args, cwd=proj)
    assert ran.returncode == 3, ran
    assert message in ran.stderr
    assert tree(proj.parent) == before


def test_adapter_skeletons_of_every_battery_are_ruff_clean(tmp_path: Path) -> None:
    """Rendered in-process for all batteries with a base class (the CLI path is above)."""
    from toolkit_batteries.cli.scaffold.adapter import adapter_batteries, render_adapter
    from toolkit_batteries.cli.scaffold.names import FieldSpec

    batteries = adapter_batteries()
    assert {"auth", "cache", "db", "queue", "session"} <= set(batteries)
    fields = [FieldSpec("endpoint", "str"), FieldSpec("timeout", "float", True)]
    for battery in batteries:
        skeleton = render_adapter(battery, "acme", f"adapters.{battery}.acme", fields)
        (tmp_path / f"{battery}_acme.py").write_text(skeleton.text)
    _ruff_clean(tmp_path, tmp_path)
    code = "\n".join(
        f"import {battery}_acme as m; assert issubclass(m.{cls}, base_class_of({battery!r}))"
        for battery, cls in ((b, render_adapter(b, "acme", "x", []).class_name) for b in batteries)
    )
    ran = subprocess.run(
        [sys.executable, "-c", f"from toolkit_batteries.core.loading import base_class_of\n{code}"],
        cwd=tmp_path,
        env=base_env(DJANGO_SETTINGS_MODULE="tests.settings", PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr

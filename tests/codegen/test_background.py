"""Jobs, schedules, sagas and ``permission:``: goldens, fmt, breaking, and a real run.

The fixture ``schemas/background`` declares every new construct (two modules, so a saga
calls an rpc of another module). Golden copies live in ``golden/background/<backend>/``
(``TOOLKIT_UPDATE_GOLDEN=1`` rewrites them); the last tests compile the fixture into a
throw-away Django app, fire its schedule through the scheduler battery and run a saga
step through the workflow definition the compiler generated.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.golden import assert_golden
from toolkit_codegen.backends import APP_BACKENDS, BackendOptions, generate
from toolkit_codegen.backends.job_stubs import append_job_stubs, render_jobs
from toolkit_codegen.backends.schedules import render_app_schedules
from toolkit_codegen.backends.workflows import render_app_workflows
from toolkit_codegen.breaking import compare
from toolkit_codegen.compiler import load_paths, load_sources
from toolkit_codegen.format import format_source
from toolkit_codegen.grammar import parse_file

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "schemas" / "background"
GOLDEN = HERE / "golden" / "background"
ROOT = HERE.parent.parent
RUFF = ROOT / ".venv" / "bin" / "ruff"
RUFF_RULES = "E,F,W,I,B,UP,SIM,RUF,D401"
BACKENDS = ("jobs", "schedules", "workflows", "openapi")


def schema() -> Any:
    loaded = load_paths([FIXTURE])
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    return loaded.schema


def produced() -> dict[str, str]:
    """Return every golden-checked file: the backends' and the user-side files."""
    s = schema()
    files = {}
    for backend in BACKENDS:
        for rel, text in generate(backend, s, BackendOptions()).items():
            files[f"{backend}/{rel}.golden"] = text
    files["app/jobs.py.golden"] = render_jobs(s, "api")
    files["app/schedules.py.golden"] = render_app_schedules("api")
    files["app/workflows.py.golden"] = render_app_workflows("api")
    return files


def test_backend_output_matches_the_golden_files() -> None:
    assert_golden(produced(), GOLDEN, pattern="*.golden")


def test_generated_python_is_formatted_and_lint_clean(tmp_path: Path) -> None:
    for rel, text in produced().items():
        if rel.endswith(".py.golden"):
            target = tmp_path / rel.replace("/", "_").removesuffix(".golden")
            target.write_text(text)
    check = [str(RUFF), "check", "--isolated", "--select", RUFF_RULES, "--line-length", "100"]
    ran = subprocess.run([*check, str(tmp_path)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stdout
    fmt = [str(RUFF), "format", "--isolated", "--check", "--line-length", "100", str(tmp_path)]
    ran = subprocess.run(fmt, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stdout


def test_backends_write_nothing_for_a_schema_without_the_constructs() -> None:
    plain = load_sources({"app.toolkit": "entity A {\n  id: uuid @primary\n}\n"})
    for backend in ("jobs", "schedules", "workflows"):
        assert backend in APP_BACKENDS
        assert generate(backend, plain.schema, BackendOptions()) == {}


def test_openapi_carries_x_permission_x_roles_and_security() -> None:
    import json

    doc = json.loads(generate("openapi", schema(), BackendOptions())["openapi.json"])
    get = doc["paths"]["/notes/{id}"]["get"]
    assert get["x-permission"] == {
        "action": "note.read",
        "resource": "Note",
        "owner_field": "owner_id",
    }
    assert get["security"] == [{"bearerAuth": []}]  # a check needs a verified caller
    delete = doc["paths"]["/notes/{id}"]["delete"]
    assert delete["x-roles"] == ["admin", "editor"]
    health = doc["paths"]["/health"]["get"]
    assert health["x-permission"] == "none" and "security" not in health
    charge = doc["paths"]["/billing/charge"]["post"]
    assert "x-permission" not in charge and charge["x-roles"] == ["billing"]


# ---------------------------------------------------------------------------- fmt


@pytest.mark.parametrize("name", ["app.toolkit", "billing/billing.toolkit"])
def test_fmt_keeps_the_fixture_and_round_trips(name: str) -> None:
    text = (FIXTURE / name).read_text()
    assert format_source(text) == text
    before = parse_file(text, "x.toolkit").source
    after = parse_file(format_source(text), "x.toolkit").source
    assert _shape(before) == _shape(after)


def test_fmt_canonicalises_the_new_constructs() -> None:
    messy = (
        "job  A( x : string ){queue:q;retry:backoff(exponential,base:30s),max_attempts(3)}\n"
        'schedule S{dispatch:A("v") ; cron:"@daily"}\n'
        "saga G{step s{pivot:false;compensate:X.B execute:X.A}}\n"
        'service X{rpc A()->E{permission:check("a",resource:E,owner_field:o) auth:none}'
        "\nrpc B()->E{permission:none}}\n"
    )
    assert format_source(messy) == (
        "job A(x: string) {\n"
        "  queue: q\n"
        "  retry: max_attempts(3), backoff(exponential, base: 30s)\n"
        "}\n"
        "\n"
        "schedule S {\n"
        '  cron: "@daily"\n'
        '  dispatch: A("v")\n'
        "}\n"
        "\n"
        "saga G {\n"
        "  step s {\n"
        "    execute: X.A\n"
        "    compensate: X.B\n"
        "  }\n"
        "}\n"
        "\n"
        "service X {\n"
        "  rpc A() -> E {\n"
        "    auth: none\n"
        '    permission: check("a", resource: E, owner_field: o)\n'
        "  }\n"
        "  rpc B() -> E {\n"
        "    permission: none\n"
        "  }\n"
        "}\n"
    )
    once = format_source(messy)
    assert format_source(once) == once


def _shape(source: Any) -> Any:
    """Return the declarations without positions (fmt may move lines)."""

    def strip(node: Any) -> Any:
        if isinstance(node, tuple):
            return tuple(strip(n) for n in node)
        if hasattr(node, "__dataclass_fields__"):
            return tuple(
                (k, strip(getattr(node, k)))
                for k in node.__dataclass_fields__
                if not k.endswith("pos") and k not in ("arg_positions",)
            )
        return node

    return strip((source.jobs, source.schedules, source.sagas, source.services))


# ---------------------------------------------------------------------------- breaking


def _changes(old: str, new: str) -> list[tuple[str, bool]]:
    a = load_sources({"app.toolkit": BREAK_BASE + old})
    b = load_sources({"app.toolkit": BREAK_BASE + new})
    assert a.ok and b.ok, (a.diagnostics, b.diagnostics)
    return [(c.kind, c.breaking) for c in compare(a.schema, b.schema)]


BREAK_BASE = """entity E {
  id: uuid @primary
  owner: string
}
service S {
  rpc A(id: uuid) -> E {
    http: GET "/e/{id}"
    auth: none
  }
}
"""


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param("job J(x: string)\n", "", [("job_removed", True)], id="job_removed"),
        pytest.param("", "job J(x: string)\n", [("job_added", False)], id="job_added"),
        pytest.param(
            "job J(x: string)\n",
            "job J(x: int32)\n",
            [("job_params_changed", True)],
            id="job_params_changed",
        ),
        pytest.param(
            "job J() { queue: a }\n",
            "job J() { queue: b }\n",
            [("job_queue_changed", False)],
            id="job_queue_changed",
        ),
        pytest.param(
            "job J()\n",
            "job J() { retry: max_attempts(3) }\n",
            [("job_retry_changed", False)],
            id="job_retry_changed",
        ),
        pytest.param(
            "job J()\n",
            'job J()\nschedule D { cron: "@daily"  dispatch: J() }\n',
            [("schedule_added", False)],
            id="schedule_added",
        ),
        pytest.param(
            'job J()\nschedule D { cron: "@daily"  dispatch: J() }\n',
            'job J()\nschedule D { cron: "@hourly"  dispatch: J() }\n',
            [("schedule_changed", False)],
            id="schedule_changed",
        ),
        pytest.param(
            "saga G { step a { execute: S.A } }\n",
            "",
            [("saga_removed", True)],
            id="saga_removed",
        ),
        pytest.param(
            "saga G { step a { execute: S.A } }\n",
            "saga G { step a { execute: S.A  pivot: true } }\n",
            [("saga_steps_changed", True)],
            id="saga_steps_changed",
        ),
    ],
)
def test_breaking_knows_the_background_declarations(
    old: str, new: str, expected: list[tuple[str, bool]]
) -> None:
    assert _changes(old, new) == expected


def test_breaking_flags_tightened_access_and_not_relaxed_access() -> None:
    open_rpc = (
        'service P {\n  rpc B(id: uuid) -> E {\n    http: GET "/p/{id}"\n    auth: none\n  }\n}\n'
    )
    checked = (
        'service P {\n  rpc B(id: uuid) -> E {\n    http: GET "/p/{id}"\n'
        '    permission: check("e.read", resource: E, owner_field: owner)\n  }\n}\n'
    )
    roles = (
        'service P {\n  rpc B(id: uuid) -> E {\n    http: GET "/p/{id}"\n'
        "    auth: required(roles: {admin})\n  }\n}\n"
    )
    assert _changes(open_rpc, checked) == [("operation_access_tightened", True)]
    assert _changes(checked, open_rpc) == [("operation_access_relaxed", False)]
    assert _changes(open_rpc, roles) == [("operation_access_tightened", True)]


# ---------------------------------------------------------------------------- job stubs


def test_job_stubs_are_appended_and_hand_written_code_is_kept() -> None:
    s = schema()
    first = render_jobs(s, "api")
    edited = first.replace(
        '    """Job Sweep (queue maintenance)."""\n    raise NotImplementedError',
        '    """Sweep for real."""\n    return None  # my code',
    )
    assert append_job_stubs(s, edited) is None  # nothing missing
    trimmed = edited.split('@job(**JOB_OPTIONS["SendDigest"])')[0].rstrip() + "\n"
    trimmed = trimmed.replace("from .generated.jobs import JOB_OPTIONS\n", "")
    appended = append_job_stubs(s, trimmed)
    assert appended is not None
    assert appended.startswith(trimmed.split("\n\n\n")[0].split("from toolkit_batteries")[0])
    assert "from .generated.jobs import JOB_OPTIONS" in appended
    assert appended.count("def send_digest(user_id: str, count: int, tier: str) -> None:") == 1
    assert "def notify(options: dict[str, Any]) -> None:" in appended
    assert "from typing import Any" in appended
    compile(appended, "jobs.py", "exec")


def test_job_stubs_refuse_invalid_python() -> None:
    from toolkit_codegen.backends import BackendError

    with pytest.raises(BackendError) as caught:
        append_job_stubs(schema(), "def broken(:\n", "api/jobs.py")
    assert str(caught.value.diagnostics[0]).startswith("api/jobs.py:1:")


# ---------------------------------------------------------------------------- a real run

HANDLERS = """
from typing import Any

CALLS: list[tuple[str, dict[str, Any]]] = []


class NoteService:
    def create_note(self, request: Any, *, title: str) -> dict[str, Any]:
        CALLS.append(("create_note", {"title": title}))
        return {"title": title}

    def delete_note(self, request: Any, *, id: Any) -> dict[str, Any]:
        CALLS.append(("delete_note", {"id": type(id).__name__}))
        return {}

    def get_note(self, request: Any, *, id: Any) -> dict[str, Any]:
        return {}

    def health(self, request: Any) -> dict[str, Any]:
        return {}


class InvoiceService:
    def charge(self, request: Any, *, amount: int) -> dict[str, Any]:
        CALLS.append(("charge", {"amount": amount}))
        return {"charged": amount}

    def refund(self, request: Any, *, id: Any) -> dict[str, Any]:
        return {}
"""

JOBS = """from toolkit_batteries.queue.jobs import job

from .generated.jobs import JOB_OPTIONS

RAN: list[tuple[str, int, str]] = []


@job(**JOB_OPTIONS["SendDigest"])
def send_digest(user_id: str, count: int, tier: str) -> None:
    RAN.append((user_id, count, tier))
"""


class _Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []

    def dispatch(self, job: Any, args: Any, kwargs: Any) -> str:
        self.sent.append((job, tuple(args), dict(kwargs or {})))
        return f"id-{len(self.sent)}"


@pytest.fixture
def compiled_app(tmp_path: Path) -> Any:
    import uuid

    from toolkit_batteries.api_runtime.project import plan

    package = f"tkbg_{uuid.uuid4().hex[:10]}"
    app_dir = tmp_path / package / "api"
    app_dir.mkdir(parents=True)
    (tmp_path / package / "__init__.py").write_text("")
    (app_dir / "__init__.py").write_text("")
    (app_dir / "handlers.py").write_text(HANDLERS)
    (app_dir / "jobs.py").write_text(JOBS)
    result = plan(FIXTURE, app_dir, "api", f"{package}.api")
    assert result.ok, [str(d) for d in result.diagnostics]
    actions = {c.path.name: c.action for c in result.changes}
    assert actions["jobs.py"] == "append"  # Sweep and Notify stubs; SendDigest kept
    assert actions["schedules.py"] == actions["workflows.py"] == "create"
    result.write()
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        yield package
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == package]:
            del sys.modules[name]


def test_a_schedule_fires_its_job_once_per_slot(compiled_app: str) -> None:
    from importlib import import_module

    from toolkit_batteries.scheduler.adapters.embedded import EmbeddedScheduler
    from toolkit_batteries.scheduler.discovery import resolve_job

    schedules = import_module(f"{compiled_app}.api.schedules")
    assert [s.name for s in schedules.SCHEDULES] == ["MorningDigest", "NightlySweep"]
    recorder = _Recorder()
    monday_8 = datetime(2026, 11, 23, 8, 0, 20, tzinfo=UTC)
    scheduler = EmbeddedScheduler(dispatcher=recorder, timezone="UTC", clock=lambda: monday_8)
    try:
        for entry in schedules.SCHEDULES:
            scheduler.add(entry)
        fired = scheduler.run_pending()
        assert [f.name for f in fired] == ["MorningDigest"]
        assert scheduler.run_pending() == []  # the same slot never fires twice
    finally:
        scheduler.close()
    ((job, args, kwargs),) = recorder.sent
    assert args == ("all", 10, "pro") and kwargs == {}
    resolved = resolve_job(job)
    assert resolved.name == f"{compiled_app}.api.jobs.send_digest"
    assert resolved.queue_name == "emails"
    resolved(*args)  # the worker's call: the user's function body runs
    jobs = import_module(f"{compiled_app}.api.jobs")
    assert jobs.RAN == [("all", 10, "pro")]


def test_a_dispatcher_checks_the_job_parameters_validate_rules(compiled_app: str) -> None:
    from importlib import import_module

    generated = import_module(f"{compiled_app}.api.generated.jobs")
    with pytest.raises(ValueError) as caught:
        generated.dispatch_send_digest("", 3, "pro")
    assert str(caught.value) == ("job SendDigest: parameter user_id is shorter than 1 characters")
    with pytest.raises(ValueError, match="parameter count must be greater than 0"):
        generated.dispatch_send_digest("u1", 0, "pro")
    with pytest.raises(ValueError, match="longer than 64 characters"):
        generated.dispatch_send_digest("u" * 65, 1, "pro")


def test_a_saga_becomes_a_registered_workflow_calling_the_handlers(compiled_app: str) -> None:
    from importlib import import_module

    from toolkit_batteries.workflow import definition

    import_module(f"{compiled_app}.api.workflows")
    flow = definition("PlaceOrder")
    assert [s.name for s in flow.steps] == ["reserve", "charge", "notify"]
    assert [s.pivot for s in flow.steps] == [False, True, False]
    assert flow.steps[2].compensate is None

    class Ctx:
        input = {"title": "hello", "amount": 7, "ignored": 1}

    assert flow.steps[0].execute(Ctx()) == {"title": "hello"}
    assert flow.steps[1].execute(Ctx()) == {"charged": 7}  # an rpc of module billing
    handlers = import_module(f"{compiled_app}.api.handlers")
    assert handlers.CALLS == [("create_note", {"title": "hello"}), ("charge", {"amount": 7})]

    class Undo:
        input = {"id": "6f1c0e5e-4b1a-4f57-9a51-3d0f6a8d2c11"}

    flow.steps[0].compensate(Undo())  # the run's JSON text reaches the handler as a UUID
    assert handlers.CALLS[-1] == ("delete_note", {"id": "UUID"})

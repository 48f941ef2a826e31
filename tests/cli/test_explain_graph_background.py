"""``explain`` and ``graph`` show jobs, schedules, sagas and permission checks."""

from __future__ import annotations

from tests.cli.conftest import REPO, run_toolkit

FIXTURE = str(REPO / "tests" / "codegen" / "schemas" / "background")


def explain(name: str) -> list[str]:
    ran = run_toolkit("explain", name, FIXTURE, cwd=REPO)
    assert ran.returncode == 0, ran
    return ran.stdout.splitlines()


def test_explain_an_rpc_shows_its_permission_check() -> None:
    lines = explain("NoteService.DeleteNote")
    assert "  auth:       required (roles: admin, editor)" in lines
    assert '  permission: check "note.delete" on the Note named by id, owner in owner_id' in lines
    assert '  permission: check "note.create"' in explain("NoteService.CreateNote")
    assert "  permission: none (no check)" in explain("NoteService.Health")


def test_explain_a_job() -> None:
    lines = explain("SendDigest")
    assert lines[0].startswith("job (root).SendDigest  ") and lines[0].endswith("app.toolkit:15:1")
    assert lines[1:] == [
        "  Sends the daily digest to one user.",
        "  params:     user_id: string, count: int32, tier: Tier",
        "  queue:      emails",
        "  retry:      5 attempts, exponential backoff from 30s, doubling",
        "  scheduled:  MorningDigest",
        "  dispatch:   generated/jobs.py dispatch_<job>(...); body in jobs.py",
    ]


def test_explain_a_schedule_and_a_saga_as_json() -> None:
    env = run_toolkit("--json", "explain", "MorningDigest", FIXTURE, cwd=REPO).json
    assert env["data"]["cron"] == "0 8 * * 1-5"
    assert env["data"]["dispatch"] == {"job": "SendDigest", "args": ["all", 10, "pro"]}
    saga = run_toolkit("--json", "explain", "PlaceOrder", FIXTURE, cwd=REPO).json["data"]
    assert saga["pivot"] == "charge"
    assert saga["steps"][1] == {
        "name": "charge",
        "execute": "InvoiceService.Charge",
        "compensate": "InvoiceService.Refund",
        "pivot": True,
    }


def test_explain_an_unknown_name_suggests() -> None:
    ran = run_toolkit("explain", "SendDigst", FIXTURE, cwd=REPO)
    assert ran.returncode == 3
    assert 'no job, schedule or saga is named "SendDigst" (did you mean "SendDigest"?)' in (
        ran.stderr
    )


def test_graph_draws_jobs_schedules_and_saga_steps() -> None:
    ran = run_toolkit("graph", FIXTURE, cwd=REPO)
    assert ran.returncode == 0, ran
    out = ran.stdout
    assert '  job_SendDigest(["job SendDigest<br/>queue: emails"])' in out
    assert '  schedule_MorningDigest{{"schedule MorningDigest<br/>0 8 * * 1-5"}}' in out
    assert "  schedule_MorningDigest -->|dispatch| job_SendDigest" in out
    assert '  saga_PlaceOrder -->|"2 charge (pivot)"| rpc_InvoiceService_Charge' in out
    assert '  saga_PlaceOrder -.->|"undo charge"| rpc_InvoiceService_Refund' in out
    assert "  root -->|saga| billing" in out

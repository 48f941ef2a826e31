"""``manage.py workflow_runs``: the operations of the service from the command line."""

from __future__ import annotations

import io
import json
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from toolkit_batteries import services
from toolkit_batteries.workflow import RunStatus, Step, WorkflowDefinition, register


@pytest.fixture
def configured(sqlite_dsn):
    toolkit = {
        "workflow": {"adapter": "db", "options": {"dsn": sqlite_dsn, "namespace": "cmd"}},
        "queue": {"adapter": "memory"},
    }
    with override_settings(TOOLKIT=toolkit):
        yield services.container().workflow()
    services.close()


def run(*args: str):
    out = io.StringIO()
    call_command("workflow_runs", *args, stdout=out)
    return json.loads(out.getvalue())


def test_start_list_show_signal_cancel(configured):
    flow = register(
        WorkflowDefinition(f"cmd-{uuid.uuid4().hex[:8]}", steps=[Step("w", wait_for="go")])
    )
    started = run("start", flow.name, "--input", '{"sku": "B-7"}', "--run-id", "order-1")
    assert started == {"ok": True, "run_id": "order-1"}
    listed = run("list", "--workflow", flow.name)
    assert [(r["id"], r["status"], r["input"]) for r in listed] == [
        ("order-1", RunStatus.PENDING, {"sku": "B-7"})
    ]
    assert run("signal", "order-1", "go", "--payload", '"yes"') == {"ok": True}
    shown = run("show", "order-1")
    assert shown["signals"] == ["go"] and shown["workflow"] == flow.name
    assert run("cancel", "order-1") == {"ok": True}
    assert configured.get("order-1").cancel_requested is True
    assert run("recover")["ok"] is True
    assert run("purge", "--older-than", "168h") == {"ok": True, "deleted": 0}


def test_refusals_and_bad_input_exit_non_zero(configured):
    flow = register(WorkflowDefinition(f"cmd-{uuid.uuid4().hex[:8]}", steps=[Step("a", print)]))
    run("start", flow.name, "--run-id", "r2")
    with pytest.raises(CommandError) as refused:
        run("resume", "r2")  # only failed or stuck runs resume
    assert refused.value.returncode == 1
    with pytest.raises(CommandError) as missing:
        run("show", "no-such-run")
    assert missing.value.returncode == 1
    with pytest.raises(CommandError) as bad:
        run("start", flow.name, "--input", "{not json")
    assert bad.value.returncode == 2

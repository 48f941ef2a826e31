"""The workflow the crash tests run in ``manage.py queue_work`` children.

Imported by the workers through ``TOOLKIT_JOBS__IMPORTS``. Each step inserts a row
``(run_id, step, pid)`` into ``wf_test_effects`` through ``ctx.using``, inside the
step's transaction, so the table shows which process's step took effect, and how often.

``WF_HANG`` makes the first process that gets there hang (writing its pid to the file
``WF_HANG_FILE`` first), so the test knows whom to SIGKILL:

* ``WF_HANG=after:<step>``: after ``<step>``'s record committed, before the next step
  is queued (between steps);
* ``WF_HANG=during:<step>``: inside ``<step>``, after its effect row was written but
  before the transaction committed (mid-step).
"""

from __future__ import annotations

import os
import time
from typing import Any

from django.db import connections

from toolkit_batteries.workflow import Step, StepContext, WorkflowDefinition, register
from toolkit_batteries.workflow.signals import step_recorded

NAME = "tests.crash"
STEPS = ("one", "two", "three", "four")


def _hang(where: str) -> None:
    if os.environ.get("WF_HANG") != where:
        return
    path = os.environ["WF_HANG_FILE"]
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # somebody hung already
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    time.sleep(120)


def effect(ctx: StepContext) -> dict[str, Any]:
    with connections[ctx.using].cursor() as cursor:
        cursor.execute(
            "INSERT INTO wf_test_effects (run_id, step, pid) VALUES (%s, %s, %s)",
            [ctx.run_id, ctx.step, os.getpid()],
        )
    _hang(f"during:{ctx.step}")
    return {"pid": os.getpid(), "attempt": ctx.attempt}


def _after(sender: Any, *, step: str, compensating: bool, **kwargs: Any) -> None:
    if not compensating:
        _hang(f"after:{step}")


step_recorded.connect(_after, dispatch_uid="tests.workflow.crash_fixture")

register(
    WorkflowDefinition(
        NAME,
        steps=[Step(name, effect, retry={"max_attempts": 5}) for name in STEPS],
        lease=2.0,
    )
)

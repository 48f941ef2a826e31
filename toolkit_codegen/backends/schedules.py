"""The ``schedules`` backend: ``generated/schedules.py``, the scheduler battery's entries.

``schedule Daily { cron: "0 8 * * 1-5"  dispatch: SendDigest("u1", 3) }`` becomes::

    SCHEDULES = [Schedule("Daily", "0 8 * * 1-5", "api.jobs.send_digest", args=("u1", 3))]

The job is named by its registered name, so the scheduler imports the app's ``jobs``
module when it resolves it. The app's ``schedules.py`` (created once, the user's) reads
this list; the scheduler battery discovers it in every installed app, so ``toolkit
schedule:run`` fires the schema's schedules. A schema without schedules gets no file.
"""

from __future__ import annotations

from ..nodes import Schema
from ..pysource import Call, List, Tuple, assign
from . import BackendOptions
from ._background import job_registered_name
from ._django_common import PY_HEADER

__all__ = ["generate", "render_app_schedules"]

_DOC = '"""The schema\'s schedules, as the scheduler battery\'s entries."""'


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``{"generated/schedules.py": text}``, or nothing without schedules."""
    if not schema.schedules:
        return {}
    entries = []
    for sched in schema.schedules:
        call = sched.dispatch
        job = schema.job(call.job) if call is not None else None
        if call is None or job is None or sched.cron is None:
            continue  # validation reports these; a valid schema never gets here
        kwargs = [("args", Tuple(list(call.args)))] if call.args else []
        entries.append(
            Call(
                "Schedule",
                [sched.name, sched.cron, job_registered_name(job, options.app_module)],
                kwargs,
            )
        )
    text = "\n\n".join(
        [
            PY_HEADER
            + "\n"
            + '"""The schema\'s schedules, as the scheduler battery\'s entries."""',
            "from toolkit_batteries.scheduler import Schedule",
            '__all__ = ["SCHEDULES"]',
            assign("SCHEDULES", List(entries, explode=True)),
        ]
    )
    return {"generated/schedules.py": text + "\n"}


def render_app_schedules(app_label: str) -> str:
    """Return the app's ``schedules.py``: the schema's entries, and room for the user's."""
    return (
        f'"""Schedules of the {app_label} app, discovered by the scheduler battery.\n\n'
        "The schema's ``schedule`` declarations are generated into ``generated/schedules.py``\n"
        "(rewritten by ``manage.py compile_schema``); add hand-written ``Schedule``s below.\n"
        '"""\n\n'
        "from toolkit_batteries.scheduler import Schedule\n\n"
        "try:\n"
        "    from .generated.schedules import SCHEDULES as GENERATED\n"
        "except ModuleNotFoundError as exc:  # not compiled yet, or no schedule left\n"
        '    if exc.name != f"{__package__}.generated.schedules":\n'
        "        raise\n"
        "    GENERATED = []\n\n"
        "SCHEDULES: list[Schedule] = [*GENERATED]\n"
    )

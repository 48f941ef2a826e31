"""The checks of jobs, schedules and sagas (phase ``resolve``).

The asynchronous side of a schema: a job's parameters, a schedule's cron spec and the
literal arguments it dispatches a job with, and the steps of a saga (which rpcs it calls
and compensates with).
"""

from __future__ import annotations

import keyword

from .backends._background import DISPATCHER_NAMES
from .cron import cron_problem
from .grammar import did_you_mean
from .nodes import (
    Job,
    Param,
    Position,
    Saga,
    Schedule,
    snake_case,
)
from .validate_base import _DISPATCH_SCALARS, _an, _literal_problem, _show
from .validate_services import ServiceChecks


class JobChecks(ServiceChecks):
    """Job, schedule (cron, dispatch arguments) and saga rules."""

    # ------------------------------------------------------------------ jobs, schedules, sagas

    def check_job(self, job: Job) -> None:
        function = snake_case(job.name)
        # ``job Import`` is ``def import(`` in jobs.py (``job import``: the name rule says it)
        if keyword.iskeyword(function) and not keyword.iskeyword(job.name):
            self.error(
                job.pos,
                f'job {job.name} becomes the Python function "{function}", a keyword; '
                "choose another name",
            )
        first = self.job_functions.setdefault(function, job.name)
        if first != job.name:
            self.error(
                job.pos,
                f'job {job.name} and job {first} both become the Python function "{function}"; '
                "rename one",
            )
        for param in job.params:  # a job parameter is always a Python parameter
            if keyword.iskeyword(param.name):
                why = "is a Python keyword"
            elif param.name in DISPATCHER_NAMES:
                why = "is a name the generated dispatcher uses"
            else:
                continue
            self.error(param.pos, f'parameter "{param.name}" of job {job.name} {why}; rename it')
        kinds = self.check_params(job, job.name, "job")
        for param in job.params:
            if kinds.get(param.name) in ("entity", "message"):
                self.check_inputs(param.type.name, f"job {job.name}", set(), 0)

    def check_schedule(self, schedule: Schedule) -> None:
        label = f"schedule {schedule.name}"
        if schedule.pos in self.damaged:
            return  # an option failed to build; its own error says why
        if schedule.cron is None:
            self.error(schedule.pos, f'{label} needs cron: "<spec>", e.g. cron: "0 8 * * *"')
        else:
            problem = cron_problem(schedule.cron)
            if problem:
                self.error(schedule.cron_pos or schedule.pos, f"invalid cron in {label}: {problem}")
        call = schedule.dispatch
        if call is None:
            self.error(schedule.pos, f"{label} needs dispatch: <Job>(args)")
            return
        job = self.schema.job(call.job)
        if job is None or self.kinds.get(call.job) != "job":
            kind = self.kinds.get(call.job)
            if kind is not None and kind != "job":
                self.error(
                    call.pos, f"{label} dispatches {call.job}, which is {_an(kind)}, not a job"
                )
            elif call.job not in self.broken:
                jobs = [n for n, k in self.kinds.items() if k == "job"]
                self.error(
                    call.pos,
                    f"{label} dispatches unknown job {call.job}{did_you_mean(call.job, jobs)}",
                )
            return
        if len(call.args) != len(job.params):
            self.error(
                call.pos,
                f"{label}: job {job.name} takes {len(job.params)} argument"
                f"{'' if len(job.params) == 1 else 's'}, dispatch passes {len(call.args)}",
            )
            return
        bare = call.arg_bare or (False,) * len(call.args)
        for param, value, pos, is_bare in zip(
            job.params, call.args, call.arg_positions, bare, strict=False
        ):
            self.check_dispatch_arg(param, value, pos, label, is_bare)

    def check_dispatch_arg(
        self, param: Param, value: object, pos: Position, label: str, bare: bool = False
    ) -> None:
        ref = param.type
        values = self.enum_of(ref)
        if bare and values is None:
            self.error(
                pos,
                f"{label}: argument {value} is a bare name but {param.name} is {ref.name}; "
                f'quote a string ("{value}"), bare names are enum values',
            )
            return
        if values is not None:
            if not isinstance(value, str) or value not in values:
                hint = did_you_mean(str(value), values) if isinstance(value, str) else ""
                enum = "the inline enum" if ref.is_inline_enum else f"enum {ref.name}"
                shown = str(value) if bare else _show(value)
                self.error(
                    pos, f"{label}: {shown} is not a value of {enum} (parameter {param.name}){hint}"
                )
            return
        if ref.name == "timestamp":
            ok = isinstance(value, str)
            if not ok:
                self.error(pos, f"{label}: argument {param.name} (timestamp) takes an ISO string")
            return
        if ref.name not in _DISPATCH_SCALARS:
            if ref.name in ("json",):
                return
            self.error(
                pos,
                f"{label}: argument {param.name} is {ref.name}; a schedule passes literals, so "
                "the job's parameter must be a scalar or an enum",
            )
            return
        problem = _literal_problem(ref.name, value)
        if problem:
            self.error(
                pos, f"{label}: argument {_show(value)} does not fit {param.name}: {problem}"
            )

    def check_saga(self, saga: Saga) -> None:
        label = f"saga {saga.name}"
        if not saga.steps:
            self.error(saga.pos, f"{label} has no steps")
        seen: dict[str, Position] = {}
        pivots: list[str] = []
        for step in saga.steps:
            if step.name in seen:
                self.error(
                    step.pos,
                    f"duplicate step {step.name} in {label} (first declared at {seen[step.name]})",
                )
            seen.setdefault(step.name, step.pos)
            if step.execute is None and step.pos not in self.damaged:
                self.error(step.pos, f"step {step.name} of {label} needs execute: Service.Rpc")
            if step.pivot:
                if pivots:
                    self.error(
                        step.pos,
                        f"{label} has more than one pivot step ({pivots[0]} and {step.name}); "
                        "at most one step is the point of no return",
                    )
                pivots.append(step.name)
            for ref in (step.execute, step.compensate):
                if ref is None:
                    continue
                service = next((s for s in self.schema.services if s.name == ref.service), None)
                if service is None:
                    kind = self.kinds.get(ref.service)
                    if kind is not None:
                        self.error(
                            ref.pos, f"{ref.service} is {_an(kind)}, not a service ({label})"
                        )
                    elif ref.service not in self.broken:
                        names = [n for n, k in self.kinds.items() if k == "service"]
                        hint = did_you_mean(ref.service, names)
                        self.error(ref.pos, f"unknown service {ref.service}{hint} ({label})")
                    continue
                if not any(r.name == ref.rpc for r in service.rpcs):
                    hint = did_you_mean(ref.rpc, [r.name for r in service.rpcs])
                    self.error(
                        ref.pos, f"service {service.name} has no rpc {ref.rpc}{hint} ({label})"
                    )

"""The third pass for the asynchronous declarations: jobs, schedules and sagas.

Their bodies are option blocks (``retry: ...``, ``cron: ...``, ``steps: ...``) rather than
fields, so they share the option-label checks here and not the member rules of entities
and services.
"""

from __future__ import annotations

import re
from typing import Any

from .building_base import BuilderBase, duration_seconds
from .nodes import (
    Job,
    JobCall,
    Position,
    Retry,
    RpcRef,
    Saga,
    SagaStep,
    Schedule,
)
from .scanning import (
    BACKGROUND_OPTIONS,
    did_you_mean,
)
from .syntax import Raw


class BackgroundBuilding(BuilderBase):
    """Build ``job``, ``schedule`` and ``saga`` declarations and their option blocks."""

    # -- jobs, schedules, sagas

    def options(self, raws: list[Any], owner: Position, what: str) -> dict[str, Raw]:
        """Return a block's options by label; unknown and repeated labels are errors."""
        allowed = BACKGROUND_OPTIONS[what]
        found: dict[str, Raw] = {}
        labels: dict[str, Position] = {}
        for opt in raws:
            if not isinstance(opt, Raw) or opt.kind != "option":
                continue
            label = opt.items[0]
            if label not in allowed:
                self.out.damaged.add(owner)
                hint = did_you_mean(label, allowed)
                self.error(
                    opt,
                    f'unknown {what} option "{label}"{hint}; expected one of {", ".join(allowed)}',
                )
                continue
            if label in found:
                self.error(opt, f"duplicate {what} option {label}")
                continue
            found[label] = opt
            labels[label] = self.pos(opt)
        if labels:
            self.out.option_pos[owner] = labels
        return found

    def single_value(self, opt: Raw, what: str) -> Raw | None:
        values = opt.items[1]
        if len(values) != 1:
            self.error(opt, f"{opt.items[0]}: takes one value ({what})")
            return None
        return values[0]

    def _job(self, raw: Raw) -> None:
        pos = self.pos(raw)
        _, name, param_raws, body = raw.items
        params = tuple(self.param(p) for p in param_raws)
        queue: str | None = None
        retry: Retry | None = None
        if body is not None:
            self.end(pos, body.items[-1])
            opts = self.options(body.items[:-1], pos, "job")
            if "queue" in opts:
                value = self.single_value(opts["queue"], "a queue name")
                if value is not None and value.kind == "str":
                    shown = value.items[0]
                    self.error(
                        value,
                        f"queue: takes a bare name, not a string (write queue: {shown})"
                        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", shown)
                        else "queue: takes a bare name, not a string",
                    )
                elif value is not None and value.kind != "ident":
                    self.error(value, "queue: takes a bare name, e.g. queue: emails")
                elif value is not None:
                    queue = value.items[0]
            if "retry" in opts:
                retry = self.retry(opts["retry"])
        self.jobs.append(Job(name, params, pos, queue, retry, doc=self.doc(raw)))

    def retry(self, opt: Raw) -> Retry | None:
        attempts: int | None = None
        kind: str | None = None
        base: float | None = None
        base_text: str | None = None
        seen: set[str] = set()
        for item in opt.items[1]:
            if item.kind != "call" or item.items[0] not in ("max_attempts", "backoff"):
                shown = item.items[0] if item.kind in ("call", "ident") else "this value"
                hint = did_you_mean(str(shown), ("max_attempts", "backoff"))
                self.error(
                    item,
                    f"unknown retry setting {shown}{hint}; expected max_attempts(n) and "
                    "backoff(exponential, base: <duration>)",
                )
                continue
            setting = item.items[0]
            if setting in seen:
                self.error(item, f"duplicate retry setting {setting}")
                continue
            seen.add(setting)
            args = item.items[1]
            if setting == "max_attempts":
                value = args[0].items[1] if len(args) == 1 and args[0].items[0] is None else None
                if (
                    value is None
                    or value.kind != "num"
                    or not isinstance(value.items[0], int)
                    or value.items[0] <= 0
                ):
                    self.error(item, "max_attempts(n) takes one integer greater than 0")
                    continue
                attempts = value.items[0]
                continue
            kind_given = False
            for arg in args:
                key, value = arg.items
                if key is None:
                    kind_given = True
                    if kind is not None or value.kind != "ident":
                        self.error(value, "backoff(...) takes the kind first: backoff(exponential)")
                    elif value.items[0] != "exponential":
                        hint = did_you_mean(value.items[0], ("exponential",))
                        self.error(
                            value,
                            f"unknown backoff kind {value.items[0]}{hint}; exponential is the "
                            "only kind",
                        )
                    else:
                        kind = "exponential"
                elif key != "base":
                    self.error(arg, f"unknown backoff argument {key}{did_you_mean(key, ('base',))}")
                elif value.kind != "dur":
                    self.error(value, "base: takes a duration, e.g. base: 30s")
                else:
                    base_text = value.items[0]
                    base = duration_seconds(base_text)
            if kind is None and not kind_given:
                self.error(item, "backoff(...) needs its kind: backoff(exponential, base: 30s)")
        return Retry(self.pos(opt), attempts, kind, base, base_text)

    def _schedule(self, raw: Raw) -> None:
        pos = self.pos(raw)
        name = raw.items[1]
        self.end(pos, raw.items[-1])
        opts = self.options(raw.items[2:-1], pos, "schedule")
        cron: str | None = None
        cron_pos: Position | None = None
        dispatch: JobCall | None = None
        unknown_option = pos in self.out.damaged
        if "cron" in opts:
            value = self.single_value(opts["cron"], 'a string such as "0 8 * * *"')
            if value is not None and value.kind != "str":
                self.error(value, 'cron: takes a string, e.g. cron: "0 8 * * 1-5"')
            elif value is not None:
                cron, cron_pos = value.items[0], self.pos(value)
        if "dispatch" in opts:
            value = self.single_value(opts["dispatch"], "a job call")
            if value is not None and value.kind == "ident":
                self.error(value, f"dispatch: calls a job: write {value.items[0]}(...)")
            elif value is not None and value.kind != "call":
                self.error(value, "dispatch: calls a job, e.g. dispatch: SendDigest()")
            elif value is not None:
                dispatch = self.job_call(value)
        built = ("cron" not in opts or cron is not None) and ("dispatch" not in opts or dispatch)
        if not built or unknown_option:
            self.out.damaged.add(pos)
        self.schedules.append(Schedule(name, pos, cron, cron_pos, dispatch, doc=self.doc(raw)))

    def job_call(self, raw: Raw) -> JobCall | None:
        values: list[str | int | float | bool] = []
        positions: list[Position] = []
        bare: list[bool] = []
        ok = True
        for arg in raw.items[1]:
            key, value = arg.items
            if key is not None:
                self.error(arg, "dispatch arguments are positional (the job's parameters in order)")
                ok = False
            elif value.kind == "call":
                self.error(
                    value,
                    f"nested call {value.items[0]}(...) in a dispatch argument; arguments "
                    "are literals",
                )
                ok = False
            elif value.kind in ("ref", "dur"):
                self.error(value, "dispatch arguments are literals (strings, numbers, true, false)")
                ok = False
            else:
                values.append(value.items[0])
                positions.append(self.pos(value))
                bare.append(value.kind == "ident")
        if not ok:
            return None
        return JobCall(raw.items[0], tuple(values), self.pos(raw), tuple(positions), tuple(bare))

    def _saga(self, raw: Raw) -> None:
        pos = self.pos(raw)
        self.end(pos, raw.items[-1])
        steps = tuple(
            self.step(r) for r in raw.items[2:-1] if isinstance(r, Raw) and r.kind == "step"
        )
        self.sagas.append(Saga(raw.items[1], pos, steps, doc=self.doc(raw)))

    def step(self, raw: Raw) -> SagaStep:
        pos = self.pos(raw)
        self.end(pos, raw.items[-1])
        opts = self.options(raw.items[2:-1], pos, "step")
        refs: dict[str, RpcRef | None] = {}
        for label in ("execute", "compensate"):
            if label not in opts:
                continue
            value = self.single_value(opts[label], "Service.Rpc")
            if value is not None and value.kind == "ref":
                refs[label] = RpcRef(value.items[0], value.items[1], self.pos(value))
            else:
                self.out.damaged.add(pos)
                if value is not None:
                    self.error(value, f"{label}: names an rpc as Service.Rpc")
        pivot = False
        if "pivot" in opts:
            value = self.single_value(opts["pivot"], "true or false")
            if value is not None and value.kind != "bool":
                self.error(value, "pivot: takes true or false")
            elif value is not None:
                pivot = value.items[0]
        return SagaStep(raw.items[1], pos, refs.get("execute"), refs.get("compensate"), pivot)

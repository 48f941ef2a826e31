"""The ``jobs`` backend: ``generated/jobs.py``, the schema's job options and dispatchers.

For ``job SendDigest(user_id: string) { queue: emails  retry: max_attempts(5) }`` it
writes::

    JOB_OPTIONS = {"SendDigest": {"name": "api.jobs.send_digest", "queue": "emails", ...}}

    def dispatch_send_digest(user_id: str) -> str:
        '''Queue job SendDigest on queue emails; return the message id.'''
        from ..jobs import send_digest

        return send_digest.dispatch(user_id)

The job's body is the user's: ``jobs.py`` (created once, then only appended to, by
:mod:`.job_stubs`) decorates ``send_digest`` with ``@job(**JOB_OPTIONS["SendDigest"])``,
so a changed ``queue:`` or ``retry:`` takes effect on the next compile without touching
the user's code. A schema without jobs gets no file.
"""

from __future__ import annotations

from ..escaping import py_docstring
from ..nodes import Schema
from ..pysource import Call, Dict, List, Lit, Raw, assign, expr_of, render, sorted_all
from . import BackendOptions
from ._background import JOB_ALIAS, job_function, job_options, json_type
from ._django_common import PY_HEADER

__all__ = ["generate"]

_CHECKS = '''def _check(job: str, values: dict[str, Any]) -> None:
    """Raise ``ValueError`` when an argument breaks its parameter's ``@validate``."""
    for name, rules in _RULES.get(job, {}).items():
        value = values[name]
        problem = None if value is None else _problem(value, rules)
        if problem:
            raise ValueError(f"job {job}: parameter {name} {problem}")


def _problem(value: Any, rules: dict[str, Any]) -> str | None:
    """Return what ``value`` breaks (never the value itself), or None."""
    if "min_len" in rules and len(value) < rules["min_len"]:
        return f"is shorter than {rules['min_len']} characters"
    if "max_len" in rules and len(value) > rules["max_len"]:
        return f"is longer than {rules['max_len']} characters"
    if "format" in rules and not _is_format(rules["format"], value):
        return f"is not a valid {rules['format']}"
    bounds = (
        ("gt", lambda v, b: v > b, "greater than"),
        ("gte", lambda v, b: v >= b, "at least"),
        ("lt", lambda v, b: v < b, "less than"),
        ("lte", lambda v, b: v <= b, "at most"),
    )
    for rule, holds, text in bounds:
        if rule in rules and not holds(value, rules[rule]):
            return f"must be {text} {rules[rule]}"
    return None


def _is_format(kind: str, value: str) -> bool:
    from django.core.exceptions import ValidationError
    from django.core.validators import URLValidator, validate_email

    try:
        if kind == "email":
            validate_email(value)
        elif kind == "url":
            URLValidator()(value)
        else:
            uuid.UUID(str(value))
    except (ValidationError, ValueError):
        return False
    return True'''
_RULE_NAMES = ("min_len", "max_len", "format", "gt", "gte", "lt", "lte")


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``{"generated/jobs.py": text}``, or nothing for a schema without jobs."""
    jobs = schema.jobs
    if not jobs:
        return {}
    table = Dict(
        [(job.name, expr_of(job_options(job, options.app_module))) for job in jobs], explode=True
    )
    names = sorted_all(["JOB_OPTIONS", *(f"dispatch_{job_function(j)}" for j in jobs)])
    rules = {
        job.name: {
            p.name: {
                k: getattr(p.validation, k)
                for k in _RULE_NAMES
                if getattr(p.validation, k) is not None
            }
            for p in job.params
            if p.validation is not None and not p.validation.is_empty
        }
        for job in jobs
    }
    rules = {name: params for name, params in rules.items() if params}
    blocks = [
        PY_HEADER
        + "\n"
        + '"""The schema\'s jobs: their ``@job`` options and typed dispatchers.\n\n'
        "The job functions are yours, in the app's ``jobs.py``; they are decorated with\n"
        '``@job(**JOB_OPTIONS["<Job>"])`` so the queue and retry follow the schema. A\n'
        "dispatcher checks its arguments against the parameters' ``@validate`` rules.\n"
        '"""',
        "from __future__ import annotations",
        ("import uuid\n" if rules else "") + "from typing import Any",
        assign("__all__", List(list(names))),
        assign("JOB_OPTIONS: dict[str, dict[str, Any]]", table),
    ]
    if rules:
        blocks.append(assign("_RULES: dict[str, dict[str, dict[str, Any]]]", expr_of(rules)))
    for job in jobs:
        fn = job_function(job)
        args = [Raw(f"{p.name}: {json_type(schema, p.type)}") for p in job.params]
        tail = " -> str:"
        signature = render(Call(f"def dispatch_{fn}", args), 0, 0, len(tail))
        queue = job.queue or "default"
        # A parameter named like the job's function would be shadowed by the import.
        local = JOB_ALIAS if fn in {p.name for p in job.params} else fn
        imported = fn if local == fn else f"{fn} as {local}"
        call = render(Call(f"{local}.dispatch", [Raw(p.name) for p in job.params]), 1, 7)
        check = ""
        if job.name in rules:
            values = Dict([(p.name, Raw(p.name)) for p in job.params if p.name in rules[job.name]])
            check = (
                f"    _check({render(Lit(job.name), 1)}, {render(values, 1, 10 + len(job.name))})\n"
            )
        doc = py_docstring(f"Queue job {job.name} on queue {queue}; return the message id.")
        blocks.append(
            f"{signature}{tail}\n"
            f'    """{doc}"""\n'
            f"{check}"
            f"    from ..jobs import {imported}\n\n"
            f"    return {call}"
        )
    if rules:
        blocks.append(_CHECKS)
    text = "\n\n".join(blocks[:4]) + "\n\n" + "\n\n\n".join(blocks[4:]) + "\n"
    return {"generated/jobs.py": text}

"""Names and types the ``jobs``, ``schedules`` and ``workflows`` backends share.

A schema job ``SendDigest`` is the function ``send_digest`` of the app's ``jobs.py``,
registered with the queue battery under the name ``<app module>.jobs.send_digest`` (its
default ``module.qualname``, written out so that a schedule can name it before the module
is imported). Job arguments travel as JSON, so a parameter's annotation is its JSON shape.
"""

from __future__ import annotations

from ..nodes import Job, Retry, Schema, TypeRef, snake_case

__all__ = [
    "DISPATCHER_NAMES",
    "JOB_ALIAS",
    "job_function",
    "job_options",
    "job_registered_name",
    "json_type",
    "retry_mapping",
]

#: What a dispatcher calls the job function when a parameter has the function's name.
JOB_ALIAS = "_job"
#: Names a generated dispatcher's body uses besides its parameters (a parameter of the
#: same name would shadow them, so validation refuses it).
DISPATCHER_NAMES = frozenset({JOB_ALIAS, "_check"})

_JSON_SCALARS = {
    "uuid": "str",
    "string": "str",
    "bool": "bool",
    "bytes": "str",
    "json": "Any",
    "int32": "int",
    "int64": "int",
    "float32": "float",
    "float64": "float",
    "timestamp": "str",
    "date": "str",
}


def job_function(job: Job) -> str:
    """Return the function of a job in ``jobs.py`` (``SendDigest`` -> ``send_digest``)."""
    return snake_case(job.name)


def job_registered_name(job: Job, app_module: str) -> str:
    """Return the name the queue battery registers the job under."""
    return f"{app_module}.jobs.{job_function(job)}"


def json_type(schema: Schema, typ: TypeRef) -> str:
    """Return the annotation of a job parameter: its JSON shape (uuid, timestamp: str)."""
    if typ.is_list:
        text = f"list[{json_type(schema, typ.element)}]"
        return f"{text} | None" if typ.optional else text
    if typ.is_scalar:
        text = _JSON_SCALARS[typ.name]
    elif typ.is_inline_enum or schema.enum(typ.name) is not None:
        text = "str"
    else:
        text = "dict[str, Any]"
    return f"{text} | None" if typ.optional else text


def _seconds(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return f"{text}s"


def retry_mapping(retry: Retry | None) -> dict[str, object] | None:
    """Return the queue battery's retry mapping of ``retry:`` (``None``: one attempt).

    ``backoff(exponential, base: 30s)`` is ``base_delay`` 30 s doubling per attempt.
    """
    if retry is None:
        return None
    out: dict[str, object] = {}
    if retry.max_attempts is not None:
        out["max_attempts"] = retry.max_attempts
    if retry.backoff == "exponential":
        if retry.backoff_base is not None:
            out["base_delay"] = _seconds(retry.backoff_base)
        out["multiplier"] = 2
    return out or None


def job_options(job: Job, app_module: str) -> dict[str, object]:
    """Return the ``@job(...)`` keyword arguments of a schema job."""
    out: dict[str, object] = {
        "name": job_registered_name(job, app_module),
        "queue": job.queue or "default",
    }
    retry = retry_mapping(job.retry)
    if retry is not None:
        out["retry"] = retry
    return out

"""The ``TOOLKIT_JOBS`` Django setting: which dispatcher runs jobs, and how to reach it.

The queue battery's option table has no dispatcher key (the spec injects the job
dispatcher in code), so the choice lives in its own setting::

    TOOLKIT_JOBS = {
        "dispatcher": "queue",          # "queue" (default): the toolkit queue service
                                        # "celery": send the same jobs to Celery
        "queue_instance": "default",    # queue service instance (dispatcher "queue")
        "imports": ["billing.tasks"],   # job modules besides every installed app's jobs.py
        "autodiscover": True,           # import <app>.jobs of every installed app
        "broker_url": "amqp://guest:guest@127.0.0.1:5672//",   # dispatcher "celery"
        "result_backend": "",           # optional Celery result backend
        "celery": {"task_time_limit": 300},   # any other Celery setting, lower case
    }

The environment overlays the setting one key at a time, as it does for ``TOOLKIT``:
``TOOLKIT_JOBS__DISPATCHER``, ``TOOLKIT_JOBS__QUEUE_INSTANCE``, ``TOOLKIT_JOBS__IMPORTS``
(comma-separated), ``TOOLKIT_JOBS__AUTODISCOVER``, ``TOOLKIT_JOBS__BROKER_URL`` and
``TOOLKIT_JOBS__RESULT_BACKEND``. Errors name the key, never the value; the broker and
backend URLs are secrets (they carry passwords) and never appear in ``repr``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolkit_batteries.core.errors import ConfigurationError, did_you_mean
from toolkit_batteries.core.redaction import redact_string

__all__ = ["DISPATCHERS", "JobsConfigurationError", "JobsSettings", "load_jobs_settings"]

#: The dispatcher names ``TOOLKIT_JOBS["dispatcher"]`` accepts.
DISPATCHERS = ("queue", "celery")
ENV_PREFIX = "TOOLKIT_JOBS__"
_KEYS = (
    "dispatcher",
    "queue_instance",
    "imports",
    "autodiscover",
    "broker_url",
    "result_backend",
    "celery",
)


class JobsConfigurationError(ConfigurationError):
    """``TOOLKIT_JOBS`` (or a ``TOOLKIT_JOBS__*`` variable) is wrong."""

    code = "invalid_configuration"

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        super().__init__(f'TOOLKIT_JOBS: "{key}" {reason}')


@dataclass(frozen=True)
class JobsSettings:
    """``TOOLKIT_JOBS`` resolved: defaults, then the setting, then the environment."""

    dispatcher: str = "queue"
    queue_instance: str = "default"
    imports: tuple[str, ...] = ()
    autodiscover: bool = True
    broker_url: str = field(default="", repr=False)
    result_backend: str = field(default="", repr=False)
    celery: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def describe(self) -> str:
        """Return a display-safe summary (URL passwords removed)."""
        parts = [f"dispatcher={self.dispatcher}"]
        if self.dispatcher == "queue":
            parts.append(f"queue_instance={self.queue_instance}")
        else:
            parts.append(f"broker_url={redact_string(self.broker_url)}")
        return ", ".join(parts)


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off", ""):
        return False
    raise JobsConfigurationError(key, "must be a boolean")


def _strings(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(item.strip() for item in value.split(",") if item.strip())
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise JobsConfigurationError(key, "must be a list of module paths")


def load_jobs_settings(
    raw: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> JobsSettings:
    """Resolve ``raw`` (``settings.TOOLKIT_JOBS``) and ``environ`` (``os.environ``)."""
    if raw is not None and not isinstance(raw, Mapping):
        raise JobsConfigurationError("TOOLKIT_JOBS", "must be a dict")
    raw = dict(raw or {})
    environ = os.environ if environ is None else environ
    merged: dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key).lower()
        if name not in _KEYS:
            raise JobsConfigurationError(str(key), f"is not a known key{did_you_mean(name, _KEYS)}")
        merged[name] = value
    for variable, value in environ.items():
        if variable.upper().startswith(ENV_PREFIX):
            name = variable[len(ENV_PREFIX) :].lower()
            if name in _KEYS and name != "celery" and value != "":
                merged[name] = value
    dispatcher = str(merged.get("dispatcher") or "queue").strip().lower()
    if dispatcher not in DISPATCHERS:
        raise JobsConfigurationError("dispatcher", 'must be "queue" or "celery"')
    celery = merged.get("celery") or {}
    if not isinstance(celery, Mapping):
        raise JobsConfigurationError("celery", "must be a dict of Celery settings")
    for setting in ("broker_url", "result_backend", "queue_instance"):
        if not isinstance(merged.get(setting, ""), str):
            raise JobsConfigurationError(setting, "must be a string")
    result = JobsSettings(
        dispatcher=dispatcher,
        queue_instance=str(merged.get("queue_instance") or "default").strip(),
        imports=_strings("imports", merged.get("imports") or ()),
        autodiscover=_bool("autodiscover", merged.get("autodiscover", True)),
        broker_url=str(merged.get("broker_url") or "").strip(),
        result_backend=str(merged.get("result_backend") or "").strip(),
        celery=dict(celery),
    )
    if dispatcher == "celery" and not result.broker_url:
        raise JobsConfigurationError("broker_url", 'is required when the dispatcher is "celery"')
    return result

"""The ``TOOLKIT_JOBS`` Django setting: which dispatcher runs jobs, and how to reach it.

The queue battery's option table has no dispatcher key (the spec injects the job
dispatcher in code), so the choice lives in its own setting::

    TOOLKIT_JOBS = {
        "dispatcher": "queue",          # "queue" (default): the toolkit queue service
                                        # "celery": send the same jobs to Celery
        "queue_instance": "default",    # queue service instance (dispatcher "queue")
        "imports": ["billing.tasks"],   # job modules besides every installed app's jobs.py
        "autodiscover": True,           # import <app>.jobs of every installed app
        "queues": ["default", "emails"],  # what `queue_work` works without --queue
                                        # (default: "default" and every queue a job names)
        "broker_url": "amqp://guest:guest@127.0.0.1:5672//",   # dispatcher "celery"
        "result_backend": "",           # optional Celery result backend
        "celery": {"task_time_limit": 300},   # any other Celery setting, lower case
    }

The environment overlays the setting one key at a time, as it does for ``TOOLKIT``:
``TOOLKIT_JOBS__DISPATCHER``, ``TOOLKIT_JOBS__QUEUE_INSTANCE``, ``TOOLKIT_JOBS__IMPORTS``
(comma-separated), ``TOOLKIT_JOBS__AUTODISCOVER``, ``TOOLKIT_JOBS__QUEUES``
(comma-separated), ``TOOLKIT_JOBS__BROKER_URL`` and ``TOOLKIT_JOBS__RESULT_BACKEND``.
Errors name the key, never the value; the broker and backend URLs are secrets (they
carry passwords) and never appear in ``repr``. The setting is read by the decoder of
every setting beside ``TOOLKIT`` (:mod:`toolkit_batteries.core.sidesettings`, ``docs/settings.md``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolkit_batteries.core.options import option, options_class
from toolkit_batteries.core.redaction import redact_string
from toolkit_batteries.core.sidesettings import SideSetting, read_side_setting

from ..errors import JobsConfigurationError

__all__ = ["DISPATCHERS", "JobsConfigurationError", "JobsSettings", "load_jobs_settings"]

#: The dispatcher names ``TOOLKIT_JOBS["dispatcher"]`` accepts.
DISPATCHERS = ("queue", "celery")


@options_class
class JobsOptions:
    """The keys of ``TOOLKIT_JOBS`` the decoder reads (``celery`` is passed through)."""

    dispatcher: str = option("queue", choices=DISPATCHERS, doc="who runs jobs")
    queue_instance: str = option("default", doc='queue service instance ("queue")')
    imports: tuple[str, ...] = option([], doc="job modules besides every app's jobs.py")
    autodiscover: bool = option(True, doc="import <app>.jobs of every installed app")
    queues: tuple[str, ...] = option(
        [], doc='queues queue_work works without --queue (default: "default" + every job\'s)'
    )
    broker_url: str = option("", secret=True, doc='Celery broker URL ("celery")')
    result_backend: str = option("", secret=True, doc="optional Celery result backend")


#: ``TOOLKIT_JOBS``, read by the one decoder of settings beside ``TOOLKIT``.
SETTING = SideSetting(
    "TOOLKIT_JOBS", JobsOptions, doc="which dispatcher runs jobs", error=JobsConfigurationError
)


@dataclass(frozen=True)
class JobsSettings:
    """``TOOLKIT_JOBS`` resolved: defaults, then the setting, then the environment."""

    dispatcher: str = "queue"
    queue_instance: str = "default"
    imports: tuple[str, ...] = ()
    autodiscover: bool = True
    #: The queues ``queue_work`` works when no ``--queue`` is given; empty: every queue a
    #: registered job names, plus "default".
    queues: tuple[str, ...] = ()
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


def load_jobs_settings(
    raw: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> JobsSettings:
    """Resolve ``raw`` (``settings.TOOLKIT_JOBS``) and ``environ`` (``os.environ``)."""
    if raw is not None and not isinstance(raw, Mapping):
        raise JobsConfigurationError("", "must be a dict")
    given = dict(raw or {})
    # Celery's own settings (any lower-case Celery key) are passed through verbatim.
    celery = next((given.pop(k) for k in list(given) if str(k).lower() == "celery"), None) or {}
    if not isinstance(celery, Mapping):
        raise JobsConfigurationError("celery", "must be a dict of Celery settings")
    if isinstance(given.get("dispatcher"), str):
        given["dispatcher"] = given["dispatcher"].strip().lower()
    environ = dict(os.environ if environ is None else environ)
    for variable in [v for v in environ if v.upper() == "TOOLKIT_JOBS__DISPATCHER"]:
        environ[variable] = environ[variable].strip().lower()  # "Celery" names "celery"
    conf = read_side_setting(SETTING, given, environ)
    result = JobsSettings(
        dispatcher=conf.dispatcher,
        queue_instance=conf.queue_instance.strip() or "default",
        imports=conf.imports,
        autodiscover=conf.autodiscover,
        queues=tuple(name.strip() for name in conf.queues if name.strip()),
        broker_url=conf.broker_url.strip(),
        result_backend=conf.result_backend.strip(),
        celery=dict(celery),
    )
    if result.dispatcher == "celery" and not result.broker_url:
        raise JobsConfigurationError("broker_url", 'is required when the dispatcher is "celery"')
    return result

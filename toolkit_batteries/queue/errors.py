"""Every error the queue battery raises, in one module.

The queue's own (:class:`QueueError` and its subclasses) and the jobs layer's
(dispatch, payload, registry, ``TOOLKIT_JOBS``). Each stays importable from where it was
defined before (``queue.base``, ``queue.jobs.dispatch``, ...), so existing imports work.
Messages name instances, topics and job names, never a message body.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import ToolkitError
from toolkit_batteries.core.sidesettings import SideSettingError

__all__ = [
    "DispatcherClosedError",
    "JobsConfigurationError",
    "PayloadError",
    "QueueClosedError",
    "QueueError",
    "QueueFullError",
    "UnknownJobError",
]


class QueueError(ToolkitError):
    """A queue operation failed for a reason other than an unreachable server."""

    code = "queue_error"


class QueueFullError(QueueError):
    """A push found the topic's buffer full (the ``memory`` adapter's ``buffer``)."""

    code = "resource_exhausted"
    template = (
        'queue.{instance}: topic "{topic}" is full ({limit} waiting messages); '
        "consume faster or raise the buffer option"
    )


class QueueClosedError(QueueError, RuntimeError):
    """The queue was used after :meth:`Queue.close`."""

    code = "queue_closed"
    template = "queue.{instance}: the queue is closed"


class DispatcherClosedError(ToolkitError, RuntimeError):
    """A dispatch after the dispatcher (or the container holding its queue) closed."""

    code = "dispatcher_closed"


class PayloadError(ValueError):
    """A queue message is not a job call this version understands."""


class UnknownJobError(LookupError):
    """A job name that no registered job carries."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f'no job named "{name}" is registered (is its module imported on this side?)'
        )


class JobsConfigurationError(SideSettingError):
    """``TOOLKIT_JOBS`` (or a ``TOOLKIT_JOBS__*`` variable) is wrong."""

    code = "invalid_configuration"

    def __init__(
        self, key: str, reason: str, *, setting: str = "TOOLKIT_JOBS", source: str = ""
    ) -> None:
        super().__init__(key, reason, setting=setting, source=source)

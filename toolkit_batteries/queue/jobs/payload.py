"""The wire format of a dispatched job: one small JSON object.

``{"v": 1, "job": "<name>", "args": [...], "kwargs": {...}}``, UTF-8 encoded; a call of a
``django_tasks`` task (``task.enqueue``) adds ``"task": 1`` and names the task by its
module path, which the worker imports (only a ``Task`` object found there runs). Arguments
must be JSON values (numbers, strings, booleans, null, lists, objects with string
keys); anything else fails at dispatch, in the caller, rather than on the worker.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import PayloadError

__all__ = ["Call", "PayloadError", "decode", "encode"]

VERSION = 1


@dataclass(frozen=True, slots=True)
class Call:
    """A decoded job call."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    #: ``True`` for a ``django_tasks`` task: ``name`` is its module path.
    task: bool = False


def encode(
    name: str,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    task: bool = False,
) -> bytes:
    """Return the message body for calling job ``name``; ``TypeError`` for non-JSON args."""
    document: dict[str, Any] = {"v": VERSION, "job": name}
    if task:
        document["task"] = 1
    document["args"] = list(args)
    document["kwargs"] = dict(kwargs or {})
    try:
        return json.dumps(document, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        # json's messages name the offending type, never the value.
        raise TypeError(f'job "{name}": arguments must be JSON values ({exc})') from None


def decode(body: bytes) -> Call:
    """Parse a message body; raise :class:`PayloadError` when it is not a job call."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise PayloadError("the body is not JSON") from None
    if not isinstance(document, dict):
        raise PayloadError("the body is not a JSON object")
    if document.get("v", VERSION) != VERSION:
        raise PayloadError("the body has an unknown format version")
    name, args, kwargs = document.get("job"), document.get("args", []), document.get("kwargs", {})
    if not isinstance(name, str) or not name:
        raise PayloadError('the body has no "job" name')
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise PayloadError('"args" must be a list and "kwargs" an object')
    return Call(name, tuple(args), kwargs, bool(document.get("task")))

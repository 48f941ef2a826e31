"""The log service: a levelled logger whose fields never carry a secret.

Every adapter subclasses :class:`Logger` and implements one method, :meth:`Logger._emit`,
which renders a message and its fields. The base class does everything that must not
differ between adapters: it validates ``min_level``, filters by level, merges bound fields,
and passes the message and every field through :mod:`toolkit_batteries.core.redaction`,
so an adapter cannot forget to mask a password::

    log = services.log()
    request_log = log.bind(request_id="r-42")
    request_log.info("user signed in", user_id=7, token="abc")   # token=[redacted]
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from toolkit_batteries.core.adapter import OpenContext, Service
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.redaction import redact, redact_string

__all__ = [
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "LEVELS",
    "STDLIB_LEVELS",
    "WARN",
    "Logger",
    "check_min_level",
    "safe_fields",
]

#: The levels, as the integers ``min_level`` takes (the spec: an integer, not a name).
DEBUG, INFO, WARN, ERROR, FATAL = range(5)

#: The name of each level, indexed by level; the JSON adapter writes these.
LEVELS: tuple[str, ...] = ("debug", "info", "warn", "error", "fatal")

#: The standard-library level of each level, indexed by level.
STDLIB_LEVELS: tuple[int, ...] = (
    logging.DEBUG,
    logging.INFO,
    logging.WARNING,
    logging.ERROR,
    logging.CRITICAL,
)

_SCALARS = (str, int, float, bool, type(None))


def check_min_level(value: Any, *, instance: str = "default") -> int:
    """Return ``value`` if it is a level (an integer from 0 to 4), else raise.

    Raises :class:`InvalidOptionsError`, which names the field but never the value.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidOptionsError("log", "min_level", "must be an integer", instance=instance)
    if not DEBUG <= value <= FATAL:
        raise InvalidOptionsError("log", "min_level", "must be between 0 and 4", instance=instance)
    return value


def safe_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``fields`` made safe to print: plain data with every secret masked.

    Values under secret-looking keys become ``[redacted]`` and credentials inside strings
    (URL passwords, bearer tokens, ``password=``) are masked. Other objects (exceptions,
    UUIDs, datetimes) become their ``str()``, masked the same way, because an exception's
    text is a classic place for a DSN to hide.
    """
    return {str(key): _plain(value) for key, value in redact(dict(fields)).items()}


def _plain(value: Any) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return redact_string(str(value))


class Logger(Service):
    """A levelled, structured logger: ``log.info("message", key=value, ...)``.

    Fields are keyword arguments; :meth:`bind` returns a child that adds fields to every
    line. Levels below ``min_level`` are dropped before any field is looked at, so a
    disabled ``debug`` call costs one comparison.
    """

    service_name: ClassVar[str] = "log"

    def __init__(self, *, min_level: int = DEBUG) -> None:
        self._min_level = check_min_level(min_level)
        self._fields: dict[str, Any] = {}

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Open the adapter from the service's options (only ``min_level`` is configurable)."""
        return cls(min_level=check_min_level(ctx.options.min_level, instance=ctx.instance))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.adapter_name} min_level={self._min_level}>"

    @property
    def min_level(self) -> int:
        """Return the lowest level this logger writes (``0`` debug ... ``4`` fatal)."""
        return self._min_level

    def enabled(self, level: int) -> bool:
        """Tell whether a line at ``level`` would be written; check it before costly fields."""
        return level >= self._min_level

    def bind(self, **fields: Any) -> Self:
        """Return a child logger that adds ``fields`` to every line; ``self`` is unchanged."""
        child = copy.copy(self)
        child._fields = {**self._fields, **fields}
        return child

    def debug(self, msg: str, /, **fields: Any) -> None:
        """Log ``msg`` at the debug level (0)."""
        self._log(DEBUG, msg, fields)

    def info(self, msg: str, /, **fields: Any) -> None:
        """Log ``msg`` at the info level (1)."""
        self._log(INFO, msg, fields)

    def warning(self, msg: str, /, **fields: Any) -> None:
        """Log ``msg`` at the warn level (2)."""
        self._log(WARN, msg, fields)

    #: The spec's spelling; the same method, so call depth (and caller info) is identical.
    warn = warning

    def error(self, msg: str, /, **fields: Any) -> None:
        """Log ``msg`` at the error level (3)."""
        self._log(ERROR, msg, fields)

    def fatal(self, msg: str, /, **fields: Any) -> None:
        """Log ``msg`` at the fatal level (4, stdlib ``CRITICAL``) and return.

        Unlike Go's ``Fatal``, this does not exit the process: a library must not kill a
        Django worker (and the requests it is serving) on a log call. Raise an exception
        or let the process manager decide when the process should stop.
        """
        self._log(FATAL, msg, fields)

    def _log(self, level: int, msg: str, fields: dict[str, Any]) -> None:
        if not self.enabled(level):
            return
        merged = {**self._fields, **fields} if self._fields else fields
        self._emit(level, redact_string(str(msg)), safe_fields(merged))

    def _emit(self, level: int, msg: str, fields: dict[str, Any]) -> None:
        """Write one line; ``msg`` and ``fields`` are already redacted. Adapters override."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement _emit()")

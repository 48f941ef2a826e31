"""Query strings out of HTTP clients' request logs, for every outbound battery.

``httpx`` logs each request at INFO (``HTTP Request: POST https://host/path?token=...``)
and urllib3 (under ``requests``) at DEBUG (``https://host:443 "POST /path?token=... "``).
A target's query often carries the receiver's token, so :func:`install` adds one
:class:`QueryRedactingFilter` to those loggers: every URL or path argument of a record
has its query replaced by ``?[redacted]`` before any handler sees it. The guarded
transports of this package install it when they are built, so every battery calling out
through them gets it; :func:`redact_url` is the same rule for what a battery stores.
"""

from __future__ import annotations

import logging
import re
from typing import Any

__all__ = ["REDACTED_QUERY", "QueryRedactingFilter", "install", "redact_url"]

#: What a redacted query becomes.
REDACTED_QUERY = "?[redacted]"
#: The loggers of the HTTP clients the guarded transports sit under.
CLIENT_LOGGERS = ("httpx", "urllib3.connectionpool")
#: A URL (``scheme://...``) or an absolute path, with a query.
_WITH_QUERY = re.compile(r"((?:[A-Za-z][A-Za-z0-9+.-]*://|/)[^\s\"'?#]*)\?[^\s\"'#]*")


def redact_url(url: str) -> str:
    """Return ``url`` with its query (if any) replaced by ``?[redacted]``; fragments dropped."""
    base, sep, _query = str(url).partition("#")[0].partition("?")
    return f"{base}{REDACTED_QUERY}" if sep else base


def _redacted(value: Any) -> Any:
    text = value if isinstance(value, str) else None
    if text is None and type(value).__name__ == "URL":  # httpx.URL, without importing httpx
        text = str(value)
    if text is None or "?" not in text:
        return value
    return _WITH_QUERY.sub(lambda m: m.group(1) + REDACTED_QUERY, text)


class QueryRedactingFilter(logging.Filter):
    """Replace the query of every URL or path in a record's arguments (and message)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record in place; never drop it."""
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted(arg) for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: _redacted(arg) for key, arg in record.args.items()}
        if isinstance(record.msg, str) and "?" in record.msg:
            record.msg = _redacted(record.msg)
        return True


_FILTER = QueryRedactingFilter()


def install() -> None:
    """Add the filter to the HTTP clients' loggers (once; safe to call again)."""
    for name in CLIENT_LOGGERS:
        target = logging.getLogger(name)
        if _FILTER not in target.filters:
            target.addFilter(_FILTER)

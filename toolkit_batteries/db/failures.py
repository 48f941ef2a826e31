"""Why a database connection failed, in words that carry no part of the DSN.

Driver messages name the host, port, user and database; errors the toolkit raises name
the service and instance only, so the message is mapped onto a fixed reason.
"""

from __future__ import annotations

__all__ = ["describe_failure"]

# libpq messages -> a reason without host, port, user or database names.
_FAILURES = (
    ("does not exist", "the database or role does not exist"),
    ("password authentication failed", "authentication failed"),
    ("no password supplied", "authentication failed"),
    ("no pg_hba.conf entry", "the server refused this client (pg_hba.conf)"),
    ("connection refused", "cannot reach the server (connection refused)"),
    ("timeout expired", "cannot reach the server (timed out)"),
    ("could not translate host name", "cannot resolve the server's host name"),
    ("name or service not known", "cannot resolve the server's host name"),
    ("no such file or directory", "cannot reach the server's socket"),
    ("too many clients", "the server has too many connections"),
    ("the database system is starting up", "the server is starting up"),
    ("the database system is shutting down", "the server is shutting down"),
    ("ssl", "the TLS negotiation failed"),
    ("invalid connection option", "the DSN has an invalid connection option"),
    ("invalid dsn", "the DSN is malformed"),
    ('missing "="', "the DSN is malformed"),
    ("invalid uri", "the DSN is malformed"),
    ("invalid port", "the DSN has an invalid port"),
    ("invalid integer value", "the DSN has an invalid number"),
)


def describe_failure(exc: BaseException) -> str:
    """Return why a connection failed, in words that carry no part of the DSN."""
    message = str(exc).lower()
    for needle, reason in _FAILURES:
        if needle in message:
            return reason
    return f"cannot connect ({type(exc).__name__})"

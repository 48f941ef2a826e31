"""An empty database of a test's own on the machine's PostgreSQL server.

Tests that migrate, diff or break a database need one no other test touches: created with
a unique name, its URL handed out, and dropped (``WITH (FORCE)``, so a leftover connection
cannot keep it alive) however the test ends.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

__all__ = ["empty_postgres_database"]


@contextmanager
def empty_postgres_database(server_dsn: str, prefix: str = "toolkit_t") -> Iterator[str]:
    """Create an empty database on the server of ``server_dsn``; yield its URL; drop it."""
    import psycopg

    name = f"{prefix}_{secrets.token_hex(6)}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(server_dsn)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

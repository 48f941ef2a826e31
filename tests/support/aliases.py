"""Forget the ``DATABASES`` aliases a test registered, so no later test meets them.

A battery registers an alias for a ``dsn`` at run time (``core.slots.slot_alias``); a test
that points one at a dead server or at a throwaway SQLite file leaves it in
``django.db.connections`` for the rest of the process. A later test that touches every
alias (``django_db(databases="__all__")`` flushes each at teardown) then fails on it,
depending on which tests one worker happened to run first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["aliases_forgotten"]


@contextmanager
def aliases_forgotten() -> Iterator[None]:
    """Close and forget every ``DATABASES`` alias registered inside the block."""
    from django.db import connections

    before = set(connections.settings)
    try:
        yield
    finally:
        for alias in set(connections.settings) - before:
            if hasattr(connections._connections, alias):
                connections[alias].close()
                delattr(connections._connections, alias)
            del connections.settings[alias]

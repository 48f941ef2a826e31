"""The ``db`` battery: Django's database connections, with one query API for batteries.

Get the configured database from the registry (``services.db()``) or a container
(``container.db()``); pick ``sqlfile`` (SQLite, the default) or ``sqlserver``
(PostgreSQL) in settings. The query API is the same on both: ``%s`` placeholders,
``execute`` / ``fetch_one`` / ``fetch_all`` / ``fetch_value``, ``transaction()`` and
``connection()``, all on ``django.db.connections[alias]``. :func:`django_databases`
derives ``DATABASES`` from ``TOOLKIT``, so the ORM and the batteries share one
connection per thread and one transaction. :func:`database_for` is how a SQL battery
finds its database; :func:`require_tables` is how it checks its migrations ran.
"""

from __future__ import annotations

from typing import Any

from .base import Database, MissingTablesError, Transaction, require_tables
from .connections import database_for

__all__ = [
    "Database",
    "MissingTablesError",
    "Transaction",
    "database_for",
    "django_database_settings",
    "django_databases",
    "require_tables",
]


def django_database_settings(instance: str = "default", config: Any = None) -> dict[str, Any]:
    """Return a Django ``DATABASES`` entry for the ``db`` service (see :mod:`.databases`)."""
    from .databases import django_database_settings as build

    return build(instance, config)


def django_databases(config: Any = None) -> dict[str, Any]:
    """Return the whole ``DATABASES`` setting ``TOOLKIT`` implies (see :mod:`.databases`)."""
    from .databases import django_databases as build

    return build(config)

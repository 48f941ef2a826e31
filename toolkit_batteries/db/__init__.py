"""The ``db`` battery: a SQL connection pool other services borrow.

Get the configured database from the registry (``services.db()``) or a container
(``container.db()``); pick ``sqlfile`` (SQLite, the default) or ``sqlserver``
(PostgreSQL) in settings. The query API is the same on both: ``%s`` placeholders,
``execute`` / ``fetch_one`` / ``fetch_all`` / ``fetch_value``, ``transaction()`` and
``connection()``. :func:`django_database_settings` builds the matching ``DATABASES``
entry, so the ORM and the battery use one database.
"""

from __future__ import annotations

from typing import Any

from .base import Database, Transaction, translate_placeholders

__all__ = [
    "Database",
    "Transaction",
    "django_database_settings",
    "translate_placeholders",
]


def django_database_settings(instance: str = "default", config: Any = None) -> dict[str, Any]:
    """Return a Django ``DATABASES`` entry for the ``db`` service (see :mod:`.databases`)."""
    from .databases import django_database_settings as build

    return build(instance, config)

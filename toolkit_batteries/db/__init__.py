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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Database InstanceRows MissingTablesError Transaction require_tables",
    connections="database_for",
    databases="django_database_settings django_databases",
)

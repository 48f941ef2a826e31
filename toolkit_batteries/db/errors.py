"""The db battery's errors: tables a battery needs but the migrations have not created, and
the two ways ``db seed`` stops (no seeds, a failed seed).

``db.base`` and ``db.seeding`` re-import them, so old import paths keep working.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit_batteries.core.errors import ConfigurationError

__all__ = [
    "MissingTablesError",
    "NoSeedsError",
    "SeedFailedError",
]


class MissingTablesError(ConfigurationError):
    """A battery's tables are not in its database: the migrations have not been applied."""

    code = "missing_tables"

    def __init__(self, service: str, instance: str, alias: str, tables: Sequence[str]) -> None:
        self.service = service
        self.instance = instance
        self.tables = tuple(tables)
        super().__init__(
            f"toolkit: {service}.{instance}: the table(s) {', '.join(self.tables)} do not "
            f'exist in database "{alias}"; run `python manage.py migrate --database {alias}` '
            "(or `toolkit db migrate`) to create them"
        )


class NoSeedsError(Exception):
    """No app (or not the one asked for) has a ``seeds.run()``."""


class SeedFailedError(Exception):
    """A ``seeds.run()`` raised; its transaction was rolled back."""

    def __init__(self, label: str, message: str) -> None:
        super().__init__(message)
        self.label = label

"""Per-table autovacuum settings for the batteries' hot queue tables, as a migration step.

Why: a queue table (``toolkit_queue_message``, ``toolkit_outbox_message``) deletes or
updates every row it claims, and each claim reads its index from the oldest entry on.
Until a vacuum removes them, the entries of rows already delivered sit at the head of
that index, and every claim steps over them (issue 27: 23,273 buffers for one outbox
claim at 100k pending after 20,000 sends, 6 after ``VACUUM``). PostgreSQL's default
trigger is a fraction of the table (``autovacuum_vacuum_scale_factor`` 0.2: 200,000 dead
rows on a table of a million), so the bigger the backlog the longer the claims wade
through dead entries. :data:`HOT_QUEUE` makes the trigger a fixed count of dead rows
instead, whatever the table's size; the figures behind each value are in
``docs/batteries/queue.md`` ("Vacuum"). How often the launcher looks at a database at
all is the server-wide ``autovacuum_naptime`` (60 s by default), which no table can
lower: the docs say when to change it.

:class:`SetAutovacuum` is the one migration operation every battery uses for this, so
each migration is a few lines::

    operations = [SetAutovacuum("message")]

It changes no model state (``makemigrations`` sees nothing), runs ``ALTER TABLE ...
SET (...)`` on PostgreSQL only (SQLite has no vacuum daemon: nothing to do), honours
database routers like Django's own operations, and reverses with ``ALTER TABLE ...
RESET (...)`` (back to the server's defaults). The table name is read from the model in
the migration state, so a battery whose table name is configurable gets the right one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.migrations.operations.base import Operation

__all__ = ["HOT_QUEUE", "SetAutovacuum", "storage_sql"]

#: Storage parameters of a table that is a queue: rows pushed, claimed from the head of
#: an index, then deleted or updated out of that index, thousands a second. Measured
#: (docs/batteries/queue.md, "Vacuum"): at a backlog of 1M messages the claim touched up
#: to 492 buffers before the default trigger fired (198,000 dead rows), at most 55 with
#: these. Only the dead-row trigger is changed: every queue insert is followed by an
#: update and a delete, so it always fires before the insert trigger would; the cost
#: limits stay the server's (a vacuum of the 1M-row queue table took 0.01 s when it
#: could skip the index pass, 0.3 to 0.6 s when it could not).
HOT_QUEUE: Mapping[str, int | float] = {
    # Vacuum after a fixed number of dead rows, not after a fifth of the table: with
    # the scale factor at 0 the trigger is the threshold alone, at 100 rows or 1M.
    "autovacuum_vacuum_scale_factor": 0.0,
    # A few seconds of a busy queue's churn. Lower buys little: below 2% of the
    # table's pages PostgreSQL skips the index pass anyway (the dead index entries wait
    # for a later vacuum), so the claim's walk is bounded by that rule, not by this.
    "autovacuum_vacuum_threshold": 5000,
}


def storage_sql(table: str, parameters: Mapping[str, int | float], *, reset: bool) -> str:
    """Return ``ALTER TABLE table SET (k = v, ...)``, or ``RESET (k, ...)`` when ``reset``.

    ``table`` must come quoted (``schema_editor.quote_name``); the parameter names and
    values are this module's constants, never user input, so they are written inline
    (``ALTER TABLE`` takes no bind parameters).
    """
    if reset:
        return f"ALTER TABLE {table} RESET ({', '.join(parameters)})"
    values = ", ".join(f"{name} = {value!r}" for name, value in parameters.items())
    return f"ALTER TABLE {table} SET ({values})"


class SetAutovacuum(Operation):
    """Set ``parameters`` (default :data:`HOT_QUEUE`) on ``model_name``'s table, PostgreSQL only.

    A database operation only: the model state is untouched, so it never shows in
    ``makemigrations``. On any other vendor it does nothing, forwards or backwards.
    """

    reduces_to_sql = True
    reversible = True

    def __init__(
        self, model_name: str, parameters: Mapping[str, int | float] | None = None
    ) -> None:
        self.model_name = model_name
        self.parameters = dict(HOT_QUEUE if parameters is None else parameters)

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        """Describe the operation for the migration writer (squashing rewrites it)."""
        kwargs: dict[str, Any] = {}
        if self.parameters != dict(HOT_QUEUE):
            kwargs["parameters"] = self.parameters
        return self.__class__.__qualname__, [self.model_name], kwargs

    def state_forwards(self, app_label: str, state: Any) -> None:
        """Nothing: storage parameters are not part of Django's model state."""

    def _alter(self, app_label: str, schema_editor: Any, state: Any, *, reset: bool) -> None:
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        model = state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(connection.alias, model):
            return
        table = schema_editor.quote_name(model._meta.db_table)
        schema_editor.execute(storage_sql(table, self.parameters, reset=reset))

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        """Set the parameters on the table (PostgreSQL only)."""
        self._alter(app_label, schema_editor, to_state, reset=False)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        """Reset the parameters to the server's defaults (PostgreSQL only)."""
        self._alter(app_label, schema_editor, from_state, reset=True)

    def describe(self) -> str:
        """Return the line ``migrate --plan`` and ``sqlmigrate`` show."""
        return f"Set autovacuum storage parameters on {self.model_name} (PostgreSQL only)"

    @property
    def migration_name_fragment(self) -> str:
        """Name fragment for auto-named migrations that hold this operation."""
        return f"{self.model_name.lower()}_autovacuum"

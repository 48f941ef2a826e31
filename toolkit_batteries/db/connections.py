"""Find the Django connection alias of a database, and borrow it for a battery.

Every SQL battery writes through ``django.db.connections``, so its writes join the
caller's ``transaction.atomic()`` and Django pools, health-checks and closes the
connections. This module holds the one rule for which alias that is:

* the ``db`` service's instance: the ``DATABASES`` alias whose entry is the one
  ``TOOLKIT["db"]`` derives (``default`` when ``settings.py`` calls
  ``django_databases``), else an alias registered at run time;
* a battery with its own ``dsn``: the alias of that database (``default`` when it is the
  project's database, so the battery's rows commit with the caller's), else a derived
  alias (one per database); ``dedicated_pool`` gives the battery an alias of its own;
* a battery without a ``dsn``: the ``db`` service (``ctx.container.db()``).
"""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.pools import MEMORY
from toolkit_batteries.core.slots import slot_alias

from .base import Database

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["database_for", "open_database_alias"]

#: Prefix of the aliases registered at run time (``toolkit_db_<digest>``).
ALIAS_PREFIX = "toolkit_db"


def open_database_alias(
    entry: dict[str, Any],
    *,
    service: str,
    instance: str,
    preferred: str = "default",
    dedicated: bool = False,
    cls: type[Database] = Database,
) -> Database:
    """Return a :class:`Database` on the alias holding ``entry``, connected once.

    A private in-memory SQLite database (``:memory:``) becomes a private temporary file,
    deleted when the database closes: Django opens one connection per thread, and each
    plain ``:memory:`` connection would be another, empty database.
    """
    from toolkit_batteries.core.djangoready import ensure_django

    ensure_django()
    from django.db import connections

    scratch = ""
    if entry.get("ENGINE") == "django.db.backends.sqlite3" and entry.get("NAME") == MEMORY:
        handle, scratch = tempfile.mkstemp(prefix="toolkit-memory-", suffix=".sqlite3")
        os.close(handle)
        entry = {**entry, "NAME": scratch}
        dedicated = True
    if dedicated:
        # A key Django ignores makes the entry unique to this service and instance.
        entry = {**entry, "TOOLKIT_DEDICATED": f"{service}.{instance}"}
    alias = slot_alias(connections, entry, preferred=preferred, prefix=ALIAS_PREFIX)
    database = cls(alias, instance=instance, scratch=scratch)
    try:
        database.connect(service)
    except Exception:
        database.close()
        raise
    return database


def database_for(ctx: OpenContext) -> Database:
    """Return the database a SQL battery adapter writes to.

    An empty ``dsn`` borrows the container's ``db`` service (the project's database,
    ``default`` in a derived ``DATABASES``); a ``dsn`` names its own database, reached
    through the ``DATABASES`` alias of that database.
    """
    from .databases import dsn_entry

    options = ctx.options
    dsn = str(getattr(options, "dsn", "") or "").strip()
    if not dsn:
        return ctx.container.db()
    entry = dsn_entry(dsn, options, service=ctx.service, instance=ctx.instance)
    return open_database_alias(
        entry,
        service=ctx.service,
        instance=ctx.instance,
        dedicated=bool(getattr(options, "dedicated_pool", False)),
    )

"""The db adapters; psycopg costs nothing to a project on SQLite (``sqlite``/``sqlite3``
select ``sqlfile``, ``postgres``/``postgresql`` select ``sqlserver``: the catalog row).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "sqlfile.SQLFileDatabase sqlserver.SQLServerDatabase")

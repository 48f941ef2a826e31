"""Options of the ``search`` service (full-text search)."""

from __future__ import annotations

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import matches, required, sql_target, url
from toolkit_batteries.core.options import option, options_class

__all__ = ["SearchOptions"]


_LANGUAGE = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?"
_HOST_HINT = (
    "set host to the search server's https:// URL (allow_insecure permits http, "
    "allow_private a private or loopback address)"
)


@options_class
class SearchOptions(OutboundSwitches):
    """Options of ``search``: adapters ``db`` (default), ``sqlserver``, ``searchengine``.

    ``sqlfile`` and ``sqlserver`` are aliases of ``db``. With ``db`` an empty DSN selects
    the embedded file database and a server URL selects the SQL server.
    """

    __checks__ = (
        required("toolkit_search.E002", adapters=("searchengine",), hint=_HOST_HINT).on("host"),
        url("toolkit_search.E002", adapters=("searchengine",), hint=_HOST_HINT).on("host"),
        sql_target("toolkit_search.E003", adapters=("db",)).on("dsn"),
        matches(
            "toolkit_search.E004",
            _LANGUAGE,
            "is not a text search configuration name",
            adapters=("db",),
            hint="use a configuration such as english, simple or german",
        ).on("language"),
    )

    host: str = option("", doc="search-server URL (searchengine)")
    api_key: str = option("", secret=True, doc="backend key")
    dsn: str = option("", doc="SQL URL or file path")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    language: str = option(
        "english",
        doc="PostgreSQL text search configuration (stemming and stop words) of new documents",
    )

"""The i18n adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so httpx costs nothing to a
project on the ``embed`` adapter. ``remote`` speaks the toolkit's own catalog format
(``GET /catalogs/<locale>``), not one product's API, so it keeps its neutral name.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "embed": "toolkit_batteries.i18n.adapters.embed.EmbedI18n",
    "remote": "toolkit_batteries.i18n.adapters.remote.RemoteI18n",
}

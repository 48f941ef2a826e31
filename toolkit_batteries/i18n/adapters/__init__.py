"""The i18n adapters; httpx costs nothing to a project on ``embed``. ``remote`` speaks the
toolkit's own catalog format (``GET /catalogs/<locale>``), not one product's API, so it
keeps its neutral name.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "embed.EmbedI18n remote.RemoteI18n")

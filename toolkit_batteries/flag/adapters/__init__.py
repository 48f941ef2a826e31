"""The flag adapters: ``remotecfg`` is Firebase Remote Config (``firebase.FirebaseFlag``,
alias ``firebase`` from the catalog row); httpx and PyJWT cost nothing on ``static``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "static.StaticFlag remotecfg=firebase.FirebaseFlag")

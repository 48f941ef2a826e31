"""The ``objstore_b`` adapter's first module path, kept for settings and migrations.

The adapter lives in :mod:`toolkit_batteries.storage.adapters.r2` (``R2Storage``); a
``STORAGES`` entry or a migration naming ``...objstore_b.ObjStoreBStorage`` still loads it.
"""

from __future__ import annotations

from .r2 import R2Storage as ObjStoreBStorage

__all__ = ["ObjStoreBStorage"]

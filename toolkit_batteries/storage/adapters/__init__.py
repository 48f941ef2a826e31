"""The storage adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so boto3 and
django-storages cost nothing to a project on the local storage. The vendor aliases
``s3`` -> ``objstore`` and ``r2`` -> ``objstore_b`` live in the shared
``VENDOR_ALIASES`` table of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "local": "toolkit_batteries.storage.adapters.local.LocalStorage",
    "objstore": "toolkit_batteries.storage.adapters.objstore.ObjStoreStorage",
    "objstore_b": "toolkit_batteries.storage.adapters.objstore_b.ObjStoreBStorage",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers storage.
ALIASES: dict[str, str] = {}

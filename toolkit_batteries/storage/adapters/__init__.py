"""The storage adapters, by canonical name (default first, as in the catalog).

Modules are named after the product they talk to: ``objstore`` is Amazon S3 or an
S3-compatible store (``s3.py: S3Storage``), ``objstore_b`` is Cloudflare R2 (``r2.py:
R2Storage``); ``objstore.py`` and ``objstore_b.py`` keep the first class paths loading for
settings and migrations that name them. Values are dotted paths, imported only when an
adapter opens, so boto3 and django-storages cost nothing to a project on the local
storage. The vendor aliases ``s3`` and ``r2`` live in the shared ``VENDOR_ALIASES`` table
of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "local": "toolkit_batteries.storage.adapters.local.LocalStorage",
    "objstore": "toolkit_batteries.storage.adapters.s3.S3Storage",
    "objstore_b": "toolkit_batteries.storage.adapters.r2.R2Storage",
}

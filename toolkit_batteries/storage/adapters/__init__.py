"""The storage adapters: ``objstore`` is Amazon S3 or an S3-compatible store
(``s3.S3Storage``), ``objstore_b`` is Cloudflare R2 (``r2.R2Storage``); aliases ``s3`` and
``r2`` from the catalog row. ``objstore.py`` and ``objstore_b.py`` keep the first class
paths loading for settings and migrations that name them. boto3 and django-storages cost
nothing to a project on ``local``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "local.LocalStorage objstore=s3.S3Storage objstore_b=r2.R2Storage"
)

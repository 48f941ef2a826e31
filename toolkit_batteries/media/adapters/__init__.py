"""The media adapters: ``objstore`` is Amazon S3 or an S3-compatible store
(``s3.S3Media``, on the storage battery's ``S3Storage``; alias ``s3`` from the catalog
row); boto3 costs nothing to a project on ``local``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "local.LocalMedia objstore=s3.S3Media")

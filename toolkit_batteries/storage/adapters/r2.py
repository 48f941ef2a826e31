"""The ``objstore_b`` adapter (``r2``): Cloudflare R2's S3 API at its account endpoint.

The same django-storages ``S3Storage`` as ``objstore`` (``s3``), pointed at
``https://<account_id>.r2.cloudflarestorage.com`` (``endpoint`` overrides it), signing
for region ``auto`` unless ``region`` names another. ``account_id`` is required unless
``endpoint`` is set.

R2's S3 API has no bucket policies: public access is set on the store's side (a
public bucket domain, served under ``public_url``). So ``sync_policy`` checks each listed
bucket exists and fails for a bucket whose policy asks for public access (``sync_fail``
then warns or fails the open), instead of pretending to have pushed it.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import PolicySyncError
from .s3 import S3Storage

__all__ = ["R2Storage"]

_ACCOUNT = re.compile(r"[A-Za-z0-9]{1,64}")


class R2Storage(S3Storage):
    """Cloudflare R2's S3 API at its ``account_id`` endpoint."""

    adapter_name = "objstore_b"

    def endpoint_of(self, options: Any) -> str:
        if options.endpoint:
            return super().endpoint_of(options)
        if not options.account_id:
            raise self.invalid("account_id", "is required by objstore_b (or set endpoint)")
        if not _ACCOUNT.fullmatch(options.account_id):
            raise self.invalid("account_id", "must be letters and digits only")
        return f"https://{options.account_id}.r2.cloudflarestorage.com"

    def region_of(self, options: Any) -> str:
        return "auto" if options.region in ("", "us-east-1") else options.region

    def _sync_bucket(self, bucket: str) -> None:
        self.client.head_bucket(Bucket=bucket)
        if self.bucket_policy_document(bucket) is not None:
            raise PolicySyncError(
                f"storage.{self.instance}: objstore_b has no bucket policies; make "
                f'bucket "{bucket}" public on the store\'s side'
            )

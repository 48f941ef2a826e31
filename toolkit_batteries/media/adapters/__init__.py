"""The media adapters, by canonical name (default first, as in the catalog).

``objstore`` is Amazon S3 or an S3-compatible store (``s3.py: S3Media``, on the storage
battery's ``S3Storage``). Values are dotted paths, imported only when an adapter opens, so
boto3 costs nothing to a project on the local adapter. The vendor alias ``s3`` lives in
the shared ``VENDOR_ALIASES`` table of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "local": "toolkit_batteries.media.adapters.local.LocalMedia",
    "objstore": "toolkit_batteries.media.adapters.s3.S3Media",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers media.
ALIASES: dict[str, str] = {}

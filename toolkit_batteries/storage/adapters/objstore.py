"""The ``objstore`` adapter's first module path, kept for settings and migrations.

The adapter lives in :mod:`toolkit_batteries.storage.adapters.s3` (``S3Storage``). A
``STORAGES`` entry written by hand, or a migration whose ``FileField`` serialized its
storage, names ``toolkit_batteries.storage.adapters.objstore.ObjStoreStorage``; this
module keeps that path loading the same class.
"""

from __future__ import annotations

from .s3 import S3Storage as ObjStoreStorage
from .s3 import SignatureFilter

__all__ = ["ObjStoreStorage", "SignatureFilter"]

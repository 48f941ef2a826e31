"""The ``storage`` battery: object storage with presigned URLs and a typed access policy.

Each adapter IS a Django storage (``local``: ``FileSystemStorage``; ``objstore`` and
``objstore_b``: django-storages' ``S3Storage``). Pick one in ``TOOLKIT["storage"]`` and
derive Django's ``STORAGES`` from it in ``settings.py``::

    from toolkit_batteries.storage import django_storage_settings
    STORAGES = django_storage_settings(TOOLKIT)

Then ``services.storage()`` is ``storages["default"]`` (``default_storage``), and
``services.storage().bucket("avatars")`` is a view of one bucket.
"""

from __future__ import annotations

from typing import Any

from .base import (
    DEFAULT_MAX_PUT_BYTES,
    DEFAULT_PRESIGN_SECONDS,
    MAX_PRESIGN_SECONDS,
    PolicySyncError,
    Storage,
    SyncOutcome,
)
from .keys import InvalidKeyError
from .policy import AccessDeniedError, AccessPolicy, subject_of

__all__ = [
    "DEFAULT_MAX_PUT_BYTES",
    "DEFAULT_PRESIGN_SECONDS",
    "MAX_PRESIGN_SECONDS",
    "AccessDeniedError",
    "AccessPolicy",
    "InvalidKeyError",
    "PolicySyncError",
    "Storage",
    "SyncOutcome",
    "django_storage_settings",
    "subject_of",
]


def django_storage_settings(config: Any = None, *, overrides: Any = None) -> dict[str, Any]:
    """Return the ``STORAGES`` setting ``TOOLKIT["storage"]`` implies (see :mod:`.settings`)."""
    from .settings import django_storage_settings as build

    return build(config, overrides=overrides)

"""The ``storage`` battery: object storage with presigned URLs and a typed access policy.

Each adapter IS a Django storage (``local``: ``FileSystemStorage``; ``objstore`` and
``objstore_b``: django-storages' ``S3Storage``). Pick one in ``TOOLKIT["storage"]`` and
derive Django's ``STORAGES`` from it in ``settings.py``::

    from toolkit_batteries.storage import django_storage_settings
    STORAGES = django_storage_settings(TOOLKIT)

Then ``services.storage()`` is ``storages["default"]`` (``default_storage``), and
``services.storage().bucket("avatars")`` is a view of one bucket.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base=(
        "DEFAULT_MAX_PUT_BYTES DEFAULT_PRESIGN_SECONDS MAX_PRESIGN_SECONDS PolicySyncError Storage "
        "SyncOutcome"
    ),
    keys="InvalidKeyError",
    policy="AccessDeniedError AccessPolicy subject_of",
    settings="django_storage_settings",
)

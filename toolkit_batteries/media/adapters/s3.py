"""The ``objstore`` adapter (``s3``): media in an S3 bucket, through the storage battery.

The store is the storage battery's ``S3Storage`` (django-storages' ``S3Storage`` on
boto3) scoped to ``bucket``: ``endpoint`` (a compatible store; https and a public address
unless ``allow_insecure`` / ``allow_private``, checked again after DNS resolution by the
storage battery), ``region``, and ``access_key_id`` / ``secret_access_key`` (both empty:
boto3's own credential chain). Presigned URLs are the store's own (SigV4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import InvalidOptionsError

from ..base import Media

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["S3Media"]


class S3Media(Media):
    """Images and videos in an S3 (or S3-compatible) bucket."""

    adapter_name = "objstore"

    @classmethod
    def open(cls, ctx: OpenContext) -> S3Media:
        options = ctx.options
        cls.warn_lifted_rules(ctx)
        store = cls.aliased_store(ctx) or cls.build_store(options, ctx.instance)
        return cls(store, options, instance=ctx.instance)

    @staticmethod
    def build_store(options: Any, instance: str) -> Any:
        """Return the storage battery's ``S3Storage`` on ``bucket``."""
        from toolkit_batteries.core.djangoready import ensure_django

        if not options.bucket:
            raise InvalidOptionsError(
                "media", "bucket", "is required by the objstore adapter", instance=instance
            )
        ensure_django()
        from toolkit_batteries.storage.adapters.s3 import S3Storage
        from toolkit_batteries.storage.keys import InvalidKeyError, check_bucket_name

        try:
            check_bucket_name(options.bucket)
        except InvalidKeyError:
            raise InvalidOptionsError(
                "media", "bucket", "is not a valid bucket name", instance=instance
            ) from None
        given: dict[str, Any] = {
            "instance": f"media-{instance}",
            "bucket": options.bucket,
            "region": options.region or "us-east-1",
            "allow_insecure": bool(options.allow_insecure),
            "allow_private": bool(options.allow_private),
        }
        for name in ("endpoint", "access_key_id", "secret_access_key"):
            value = getattr(options, name)
            if value:
                given[name] = value
        try:
            return S3Storage(**given)
        except InvalidOptionsError as exc:
            # The storage battery names its own instance; name the media option instead.
            raise InvalidOptionsError("media", exc.field, exc.reason, instance=instance) from None

"""The ``objstore`` adapter (``s3``): Amazon S3 or an S3-compatible store, through
django-storages' ``S3Storage`` on boto3.

Each bucket is a bucket of the store. ``access_key_id`` / ``secret_access_key`` sign the
requests (both empty: boto3's own credential chain), ``region`` picks the region,
``endpoint`` points at a compatible store (path-style addressing; https and a public
address unless ``allow_insecure`` / ``allow_private``). Django's ``save`` never overwrites
(a free name is chosen); :meth:`put` and :meth:`get` are one ``PutObject`` /
``GetObject`` each. Presigned URLs are the store's own (SigV4), so they are checked by the
store; public links are unsigned URLs (or ``public_url/<bucket>/<key>``).

``sync_policy`` writes each listed bucket's policy as the store's bucket policy: an
anonymous ``s3:GetObject`` for public reads, ``s3:PutObject`` when both writes and
updates are public, ``s3:DeleteObject`` for public deletes; a bucket with nothing public
has its bucket policy removed. Buckets reached only through ``Default`` are not synced
(their names are not known in advance).

``S3Storage.bucket`` (the boto3 ``Bucket`` resource its methods use) and the toolkit's
``bucket(name)`` share one attribute: calling it gives the bucket view, reading an
attribute of it reaches the boto3 resource.
"""

from __future__ import annotations

import json
import logging
import mimetypes
import re
import threading
from typing import Any
from urllib.parse import quote

from toolkit_batteries.core.errors import (
    ConfigurationError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.tracing import traced

from ..base import DEFAULT_PRESIGN_SECONDS, Storage
from .endpoint import check_endpoint

try:
    import botocore.exceptions
    from storages.backends import s3 as storages_s3
except ImportError as exc:  # pragma: no cover - the objstore extra is part of dev installs
    raise MissingExtraError("storage", "objstore", "objstore", exc.name or "boto3") from None

__all__ = ["S3Storage", "SignatureFilter"]

_SIGNATURE = re.compile(r"(Signature[=:]\s*|X-Amz-Signature=)[0-9a-fA-F]{16,}")


class SignatureFilter(logging.Filter):
    """Redact request and presign signatures from botocore's DEBUG records.

    botocore logs each signature it computes (``botocore.auth``: ``Signature:\n<hex>``) and
    each request's ``Authorization`` header (``botocore.endpoint``); a presigned URL's
    signature is a bearer capability, so neither may reach a log line.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        redacted = _SIGNATURE.sub(r"\1[redacted]", message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def _install_filter() -> None:
    for name in ("botocore.auth", "botocore.endpoint", "botocore.hooks"):
        target = logging.getLogger(name)
        if not any(isinstance(f, SignatureFilter) for f in target.filters):
            target.addFilter(SignatureFilter())


_install_filter()

_METHODS = {"GET": "get_object", "PUT": "put_object"}


class _BucketHandle:
    """``storage.bucket``: call it for a bucket view; read it as the boto3 resource."""

    __slots__ = ("_storage",)

    def __init__(self, storage: S3Storage) -> None:
        self._storage = storage

    def __call__(self, name: str) -> Storage:
        return Storage.bucket(self._storage, name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage._boto_bucket(), name)


@traced("_open", "_save", "delete", "exists", "size", "listdir", "_put", "_get")
class S3Storage(Storage, storages_s3.S3Storage):
    """Amazon S3 (or a store speaking its API) through django-storages and boto3."""

    adapter_name = "objstore"

    def __init__(self, **kwargs: Any) -> None:
        options = self._init_toolkit(kwargs)
        endpoint = self.endpoint_of(options)
        storages_s3.S3Storage.__init__(
            self,
            bucket_name=self.bucket_name or None,
            access_key=options.access_key_id or None,
            secret_key=options.secret_access_key or None,
            security_token=None,
            session_profile=None,
            region_name=self.region_of(options),
            endpoint_url=endpoint or None,
            addressing_style="path" if endpoint else None,
            signature_version="s3v4",
            file_overwrite=False,
            querystring_auth=True,
            querystring_expire=DEFAULT_PRESIGN_SECONDS,
            custom_domain=None,
            location="",
            default_acl=None,
            object_parameters={},
            use_ssl=True,
            verify=None,
            proxies=None,
        )

    # ------------------------------------------------------------------ configuration

    def endpoint_of(self, options: Any) -> str:
        """Return the checked endpoint URL ("" for the store's own)."""
        if not options.endpoint:
            return ""
        return check_endpoint(
            options.endpoint,
            field="endpoint",
            instance=self.instance,
            allow_insecure=options.allow_insecure,
            allow_private=options.allow_private,
        )

    def region_of(self, options: Any) -> str:
        """Return the region requests are signed for."""
        return options.region or "us-east-1"

    # ------------------------------------------------------------------ boto3

    @property  # type: ignore[override]
    def bucket(self) -> Any:
        return _BucketHandle(self)

    def _boto_bucket(self) -> Any:
        if self._bucket is None:
            self._bucket = self.connection.Bucket(self._own_bucket())
        return self._bucket

    def _own_bucket(self) -> str:
        if not self.bucket_name:
            raise ConfigurationError(
                f"storage.{self.instance}: this storage has no bucket of its own; use "
                '.bucket("name"), or set the entry\'s bucket (django_storage_settings('
                'TOOLKIT, overrides={"default": {"bucket": "name"}}))'
            )
        return self.bucket_name

    @property
    def client(self) -> Any:
        """The boto3 S3 client of the calling thread."""
        return self.connection.meta.client

    def _scoped(self, bucket: str) -> S3Storage:
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)  # shares the per-thread connections
        view.bucket_name = bucket
        view._bucket = None
        view._entry = {**self._entry, "bucket": bucket}
        args, kwargs = getattr(self, "_constructor_args", ((), {}))
        view._constructor_args = (args, {**kwargs, "bucket": bucket})  # for deconstruct()
        view._views = {}
        view._views_lock = threading.Lock()
        return view

    # ------------------------------------------------------------------ primitives

    def _raw_exists(self, key: str) -> bool:
        self._own_bucket()
        return storages_s3.S3Storage.exists(self, key)

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        self._own_bucket()
        return super().listdir(path)

    def _put(self, key: str, data: Any, content_type: str) -> None:
        kind = content_type or mimetypes.guess_type(key)[0] or self.default_content_type
        bucket = self._own_bucket()
        if isinstance(data, bytes):
            self.client.put_object(Bucket=bucket, Key=key, Body=data, ContentType=kind)
        else:
            if hasattr(data, "seek"):
                data.seek(0)
            self.client.upload_fileobj(
                data, bucket, key, ExtraArgs={"ContentType": kind}, Config=self.transfer_config
            )

    def _get(self, key: str) -> bytes:
        try:
            answer = self.client.get_object(Bucket=self._own_bucket(), Key=key)
        except botocore.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                raise FileNotFoundError(f"storage.{self.instance}: no such object") from None
            raise
        return answer["Body"].read()

    def _presign(self, key: str, method: str, expires: int) -> str:
        return self.client.generate_presigned_url(
            _METHODS[method],
            Params={"Bucket": self._own_bucket(), "Key": key},
            ExpiresIn=expires,
            HttpMethod=method,
        )

    def _public_link(self, key: str) -> str:
        bucket = self._own_bucket()
        if self.options.public_url:
            return f"{self.options.public_url.rstrip('/')}/{bucket}/{quote(key)}"
        return self.unsigned_connection.meta.client.generate_presigned_url(
            "get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=1
        )

    def bucket_policy_document(self, bucket: str) -> dict[str, Any] | None:
        """Return the bucket policy ``bucket``'s access policy implies (``None``: private)."""
        public = self.policy.is_public
        actions = []
        if public(bucket, "read"):
            actions.append("s3:GetObject")
        if public(bucket, "write") and public(bucket, "update"):
            actions.append("s3:PutObject")
        if public(bucket, "delete"):
            actions.append("s3:DeleteObject")
        if not actions:
            return None
        return {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ToolkitPublicAccess",
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": actions,
                    "Resource": [f"arn:aws:s3:::{bucket}/*"],
                }
            ],
        }

    def _sync_bucket(self, bucket: str) -> None:
        document = self.bucket_policy_document(bucket)
        if document is None:
            self.client.delete_bucket_policy(Bucket=bucket)
        else:
            self.client.put_bucket_policy(Bucket=bucket, Policy=json.dumps(document))

    def ping(self) -> None:
        """Ask the store for the own bucket (or the bucket list); raise when it is down."""
        try:
            if self.bucket_name:
                self.client.head_bucket(Bucket=self.bucket_name)
            else:
                self.client.list_buckets()
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise ServiceUnavailableError(
                "storage",
                f"the object store did not answer ({type(exc).__name__})",
                instance=self.instance,
            ) from None

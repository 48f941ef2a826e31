"""The ``local`` adapter: Django's ``FileSystemStorage`` under ``root``, presigned by HMAC.

Objects live in files under ``root`` (default: ``MEDIA_ROOT``); bucket ``b`` is the
directory ``root/b``, so a key's first segment on the root view is its bucket. ``put``
writes a temporary file beside the target and renames it over, so a reader never sees
half an object.

Presigned URLs are ``<url_base>/<bucket>/<key>?e=<seconds>&t=<time>&s=<signature>``: a
Django :class:`~django.core.signing.TimestampSigner` (HMAC-SHA256 keyed by ``secret``,
default ``SECRET_KEY``, salted with the instance) over the method, the path and the
lifetime, checked with ``max_age`` by the view in :mod:`toolkit_batteries.storage.views`
(mount it at ``url_base``: ``path("media/", include("toolkit_batteries.storage.urls"))``).
``url_base`` defaults to ``MEDIA_URL``. Unsigned links (``public_url``, else
``url_base``) work where the access policy makes reads public.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.core import signing
from django.core.files.storage import FileSystemStorage

from ..base import Storage

__all__ = ["LocalStorage"]

_CHUNK = 1 << 16
#: Names of temporary files (with the process id): unique without a random name per write.
_SERIAL = itertools.count()
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


class LocalStorage(Storage, FileSystemStorage):
    """Files under ``root``; presigned URLs signed with an expiry and served by a view."""

    adapter_name = "local"

    def __init__(self, **kwargs: Any) -> None:
        options = self._init_toolkit(kwargs)
        root = options.root or str(getattr(settings, "MEDIA_ROOT", "") or "")
        if not root:
            raise self.invalid("root", "is required by the local adapter (or set MEDIA_ROOT)")
        #: The directory every bucket of this storage lives under.
        self.root = os.path.abspath(root)
        location = os.path.join(self.root, self.bucket_name) if self.bucket_name else self.root
        FileSystemStorage.__init__(self, location=location, base_url="/")

    # collectstatic asks exists/listdir of the storage's own (absolute) location: the one
    # absolute name allowed, meaning the root of this view.

    def exists(self, name: str) -> bool:
        if name == self.location:
            return os.path.isdir(self.location)
        return super().exists(name)

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        return super().listdir("" if path == self.location else path)

    # ------------------------------------------------------------------ primitives

    def _scoped(self, bucket: str) -> LocalStorage:
        return type(self)(**{**self._entry, "bucket": bucket})

    def url_name(self, key: str) -> str:
        """Return ``key``'s path below ``root`` (``<bucket>/<key>`` in a bucket view)."""
        return f"{self.bucket_name}/{key}" if self.bucket_name else key

    def _file(self, key: str) -> str:
        # ``key`` passed clean_key (relative, no "." or ".." segment, no backslash), so a
        # join under the absolute location cannot leave it.
        return os.path.join(self.location, key)

    def _put(self, key: str, data: Any, content_type: str) -> None:
        target = self._file(key)
        directory = os.path.dirname(target)
        temporary = os.path.join(directory, f".put-{os.getpid()}-{next(_SERIAL)}")
        mode = self.file_permissions_mode if self.file_permissions_mode is not None else 0o666
        try:
            handle = os.open(temporary, _FLAGS, mode)
        except FileNotFoundError:
            os.makedirs(directory, exist_ok=True)
            handle = os.open(temporary, _FLAGS, mode)
        try:
            with os.fdopen(handle, "wb", buffering=0) as out:
                if isinstance(data, bytes):
                    view = memoryview(data)
                    while view:
                        view = view[out.write(view) :]
                else:
                    if hasattr(data, "seek"):
                        with contextlib.suppress(OSError, ValueError):
                            data.seek(0)
                    while chunk := data.read(_CHUNK):
                        out.write(chunk if isinstance(chunk, bytes) else chunk.encode())
            if self.file_permissions_mode is not None:
                os.chmod(temporary, self.file_permissions_mode)
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise

    def _get(self, key: str) -> bytes:
        with open(self._file(key), "rb") as handle:
            return handle.read()

    def _url_base(self) -> str:
        base = self.options.url_base or str(getattr(settings, "MEDIA_URL", "") or "/media/")
        return base.rstrip("/")

    def _signer(self) -> signing.TimestampSigner:
        return signing.TimestampSigner(
            key=self.options.secret or settings.SECRET_KEY,
            salt=f"toolkit.storage.{self.instance}",
            algorithm="sha256",
        )

    def _presign(self, key: str, method: str, expires: int) -> str:
        name = self.url_name(key)
        signed = self._signer().sign(f"{method}\n{name}\n{expires}")
        _, stamp, signature = signed.rsplit(":", 2)
        return f"{self._url_base()}/{quote(name)}?e={expires}&t={stamp}&s={signature}"

    def _presign_put_bounded(self, key: str, expires: int, max_bytes: int) -> str:
        """Return a ``PUT`` link whose size bound ``m`` is signed with it (not to be raised)."""
        name = self.url_name(key)
        signed = self._signer().sign(f"PUT\n{name}\n{expires}\n{max_bytes}")
        _, stamp, signature = signed.rsplit(":", 2)
        query = f"e={expires}&m={max_bytes}&t={stamp}&s={signature}"
        return f"{self._url_base()}/{quote(name)}?{query}"

    def verify(
        self,
        method: str,
        name: str,
        expires: str,
        stamp: str,
        signature: str,
        max_bytes: str = "",
    ) -> bool:
        """Tell whether a presigned URL's query is valid and unexpired for ``method``.

        ``max_bytes`` is the link's ``m`` (empty when it has none): it is part of what
        was signed, so a link whose bound was changed or removed does not verify.
        """
        try:
            seconds = int(expires)
        except (TypeError, ValueError):
            return False
        if seconds < 1:
            return False
        verb = "GET" if method.upper() == "HEAD" else method.upper()
        bound = ""
        if max_bytes:
            if verb != "PUT" or not max_bytes.isascii() or not max_bytes.isdigit():
                return False
            bound = f"\n{max_bytes}"
        value = f"{verb}\n{name}\n{seconds}{bound}:{stamp}:{signature}"
        try:
            self._signer().unsign(value, max_age=seconds)
        except signing.BadSignature:  # SignatureExpired included
            return False
        return True

    def _public_link(self, key: str) -> str:
        base = (self.options.public_url or "").rstrip("/") or self._url_base()
        return f"{base}/{quote(self.url_name(key))}"

    def _sync_bucket(self, bucket: str) -> None:
        """Nothing to push: the serving view enforces the policy itself."""

    def ping(self) -> None:
        """Check ``root`` exists or can be created."""
        os.makedirs(self.root, exist_ok=True)

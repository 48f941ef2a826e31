"""The storage service: each adapter IS a Django storage, built and held by ``storages``.

Every adapter is a :class:`django.core.files.storage.Storage` subclass whose constructor
takes Django's ``STORAGES`` ``OPTIONS`` as keyword arguments, so ``STORAGES`` can name it
and :data:`django.core.files.storage.storages` builds and holds it. ``settings.py``
derives ``STORAGES`` from ``TOOLKIT["storage"]``
(:func:`~toolkit_batteries.storage.django_storage_settings`), and the container's
``open`` finds the alias holding the instance, so ``services.storage()`` *is*
``storages["default"]`` (and ``default_storage``): ``FileField``, ``default_storage`` and
``collectstatic`` use the configured storage.

What this class adds to Django's storage API, on every adapter:

* **Keys guarded** (:mod:`.keys`): every name passed to any method is checked before the
  store is touched: no traversal, no absolute path, no NUL, no backslash.
* **Buckets**: :meth:`bucket` returns a view scoped to one bucket (the same adapter
  class, so it is a Django storage too); the storage's own bucket is the ``bucket`` key
  of its ``STORAGES`` entry (the ``local`` adapter's own bucket may be empty: the root,
  where a key's first segment is its bucket).
* **Access policy** (:mod:`.policy`): :meth:`as_subject` returns a view acting for a
  user or subject id; each call it makes is checked (``read``, ``write`` for a new
  object, ``update`` for an overwrite, ``delete``). Calls on a plain view are the
  server's own and are trusted. :meth:`link` and :meth:`url` return an unsigned public
  link where the policy makes reads public, else a presigned one.
* **Bytes in, bytes out**: :meth:`put` (exact key, overwrites, like the object stores)
  and :meth:`get`, next to Django's ``save`` (never overwrites: a free name is chosen)
  and ``open``.
* **Presigned URLs**: :meth:`presign` for ``GET`` (and ``HEAD``) or ``PUT`` with an
  expiry in seconds.
* **Policy sync**: :meth:`sync_policy` pushes the policy to the store (``policy_sync:
  auto`` does it when the storage opens; a failure warns or, with ``sync_fail:
  require``, fails the open).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, ClassVar

from django.core.files.storage import Storage as DjangoStorage

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.options import Where, build_options, decode_mapping

from .errors import PolicySyncError
from .keys import check_bucket_name, clean_key, clean_prefix
from .policy import AccessPolicy, subject_of

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext
    from toolkit_batteries.core.slots import Held

    from .options import StorageOptions

__all__ = [
    "DEFAULT_PRESIGN_SECONDS",
    "MAX_PRESIGN_SECONDS",
    "PolicySyncError",
    "Storage",
    "SyncOutcome",
    "decode_options",
]

logger = logging.getLogger("toolkit.storage")

#: Lifetime of a presigned URL when the caller names none (Django's ``url()`` too).
DEFAULT_PRESIGN_SECONDS = 3600
#: The longest lifetime a presigned URL may have (the object stores' limit: 7 days).
MAX_PRESIGN_SECONDS = 7 * 24 * 3600
#: The largest body the ``local`` view stores from one ``PUT`` when the link names no
#: smaller ``max_bytes`` (and for unsigned ``PUT``\s the policy lets in): 100 MiB.
DEFAULT_MAX_PUT_BYTES = 100 * 1024 * 1024
#: The source named by errors about ``STORAGES`` entries.
SOURCE = "settings.STORAGES"
#: Keys of a ``STORAGES`` entry's ``OPTIONS`` that are not battery options.
ENTRY_KEYS = ("instance", "bucket")
_TRUSTED: Any = object()
_MAX_BUCKET_VIEWS = 256


@dataclass(frozen=True, slots=True)
class SyncOutcome:
    """The result of pushing one bucket's policy: ``ok``, or the reason it failed."""

    bucket: str
    ok: bool
    reason: str = ""


def decode_options(params: Mapping[str, Any], instance: str) -> StorageOptions:
    """Decode a ``STORAGES`` entry's options as the battery's options, strictly."""
    from .options import StorageOptions

    where = Where("storage", instance, SOURCE)
    return build_options(StorageOptions, decode_mapping(StorageOptions, dict(params), where), where)


def _as_bytes_or_file(data: Any) -> Any:
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    return data


class _Open:
    """``open``: the container's class method on the class, Django's method on objects."""

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            return functools.partial(_open_held, cls)
        return functools.partial(DjangoStorage.open, obj)


def _open_held(cls: type[Storage], ctx: OpenContext) -> Held[Storage] | Storage:
    """Return ``storages[instance]``, or the container's own storage (see :mod:`.settings`)."""
    from .settings import open_held

    return open_held(cls, ctx)


class Storage(Service, DjangoStorage):
    """Base of the storage adapters: Django's ``Storage`` plus the toolkit's contract."""

    service_name: ClassVar[str] = "storage"

    #: The TOOLKIT instance this storage was derived from.
    instance: str
    #: The decoded options (never displayed: it holds secrets; see ``redacted_services``).
    options: StorageOptions
    #: The decoded access policy.
    policy: AccessPolicy
    #: The bucket this view reads and writes ("" on ``local``: the root).
    bucket_name: str

    def _init_toolkit(self, kwargs: dict[str, Any]) -> StorageOptions:
        """Pop the entry keys, decode the options, and set the toolkit attributes."""
        #: The entry's keyword arguments, to build bucket views of the same storage.
        self._entry = dict(kwargs)
        self.instance = str(kwargs.pop("instance", "") or "default").strip() or "default"
        bucket = str(kwargs.pop("bucket", "") or "").strip()
        if bucket:
            check_bucket_name(bucket)
        options = decode_options(kwargs, self.instance)
        self.options = options
        self.policy = AccessPolicy(options.policy, instance=self.instance)
        self.bucket_name = bucket
        self._subject = _TRUSTED
        self._views: dict[str, Storage] = {}
        self._views_lock = threading.Lock()
        return options

    def deconstruct(self) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
        """Django's migration form, without the secret options (they stay in settings)."""
        from toolkit_batteries.core.options import field_specs

        from .options import StorageOptions

        secret = {name for name, spec in field_specs(StorageOptions).items() if spec.secret}
        path, args, kwargs = super().deconstruct()  # type: ignore[misc]
        return path, args, {k: v for k, v in kwargs.items() if k not in secret}

    def invalid(self, field: str, reason: str) -> InvalidOptionsError:
        """Return the error of an option of this instance (never echoes the value)."""
        return InvalidOptionsError("storage", field, reason, instance=self.instance, source=SOURCE)

    #: ``Storage.open(ctx)`` on the class is the container's open; ``storage.open(name)``
    #: on an object is Django's (one name, two callers: see :class:`_Open`).
    open = _Open()  # type: ignore[assignment]

    # ------------------------------------------------------------------ views

    def bucket(self, name: str) -> Storage:  # type: ignore[override]
        """Return a view of this storage scoped to bucket ``name`` (a Django storage too)."""
        view = self._views.get(name)
        if view is None:
            check_bucket_name(name)
            with self._views_lock:
                view = self._views.get(name)
                if view is None:
                    view = self._scoped(name)
                    view._subject = self._subject
                    if len(self._views) < _MAX_BUCKET_VIEWS:
                        self._views[name] = view
        return view

    def as_subject(self, who: Any) -> Storage:
        """Return a view whose calls act for ``who`` and obey the access policy.

        ``who`` is a Django user, a request, a subject id, or ``None`` (anonymous).
        """
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)  # shares connections (copy.copy would not)
        view._subject = subject_of(who)
        view._views = {}
        view._views_lock = threading.Lock()
        return view

    @property
    def subject(self) -> str | None:
        """The subject this view acts for (``None``: anonymous); trusted views raise."""
        if self._subject is _TRUSTED:
            raise AttributeError("storage: this view is the server's own (trusted)")
        return self._subject

    @property
    def is_trusted(self) -> bool:
        """Tell whether this view's calls are the server's own (no policy check)."""
        return self._subject is _TRUSTED

    def policy_bucket(self, key: str) -> str:
        """Return the bucket whose policy governs ``key`` in this view.

        A bucket view's own bucket; on the ``local`` root, the key's first segment (a key
        directly under the root is in no bucket: ``""``, governed by ``Default``).
        """
        if self.bucket_name:
            return self.bucket_name
        head, slash, _ = key.partition("/")
        return head if slash else ""

    def authorize(self, operation: str, key: str) -> None:
        """Raise :class:`~.policy.AccessDeniedError` unless this view may do it."""
        if self._subject is not _TRUSTED:
            self.policy.check(self.policy_bucket(key), operation, self._subject)

    def _authorize_write(self, key: str) -> None:
        if self._subject is _TRUSTED:
            return
        bucket = self.policy_bucket(key)
        may_write = self.policy.allows(bucket, "write", self._subject)
        may_update = self.policy.allows(bucket, "update", self._subject)
        if may_write != may_update:  # only then does it matter whether the key exists
            self.policy.check(bucket, "update" if self._raw_exists(key) else "write", self._subject)
        else:
            self.policy.check(bucket, "write", self._subject)

    # ------------------------------------------------------------------ toolkit API

    def put(self, key: str, data: bytes | str | IO[bytes], *, content_type: str = "") -> str:
        """Store ``data`` under exactly ``key`` (replacing an object there); return ``key``."""
        key = clean_key(key)
        self._authorize_write(key)
        self._put(key, _as_bytes_or_file(data), content_type)
        return key

    def get(self, key: str) -> bytes:
        """Return the object's bytes; ``FileNotFoundError`` when there is none."""
        key = clean_key(key)
        self.authorize("read", key)
        return self._get(key)

    def presign(
        self,
        key: str,
        *,
        method: str = "GET",
        expires: int = DEFAULT_PRESIGN_SECONDS,
        max_bytes: int | None = None,
    ) -> str:
        """Return a URL that lets its bearer ``GET`` (or ``PUT``) ``key`` for ``expires`` s.

        ``max_bytes`` bounds what a ``PUT`` link may upload (``local``: signed into the
        link, default :data:`DEFAULT_MAX_PUT_BYTES`; a larger body answers 413 and nothing
        is stored). The object stores' SigV4 links cannot carry a bound: there it is
        refused rather than silently ignored.
        """
        key = clean_key(key)
        verb = str(method).upper()
        if verb not in ("GET", "PUT"):
            raise ValueError("storage: a presigned URL is for GET or PUT")
        seconds = int(expires)
        if not 1 <= seconds <= MAX_PRESIGN_SECONDS:
            raise ValueError(f"storage: expires is 1 to {MAX_PRESIGN_SECONDS} seconds")
        if max_bytes is not None:
            if verb != "PUT":
                raise ValueError("storage: max_bytes bounds a PUT link only")
            if int(max_bytes) < 1:
                raise ValueError("storage: max_bytes is at least 1")
        if verb == "GET":
            self.authorize("read", key)
            return self._presign(key, verb, seconds)
        self._authorize_write(key)
        if max_bytes is None:
            return self._presign(key, verb, seconds)
        return self._presign_put_bounded(key, seconds, int(max_bytes))

    def link(self, key: str) -> str:
        """Return the public link of ``key`` if reads are public, else a presigned GET URL."""
        key = clean_key(key)
        self.authorize("read", key)
        if not self.policy.legacy and self.policy.is_public(self.policy_bucket(key)):
            return self._public_link(key)
        return self._presign(key, "GET", DEFAULT_PRESIGN_SECONDS)

    def sync_policy(self) -> list[SyncOutcome]:
        """Push the access policy of every listed bucket to the store; return the outcomes."""
        outcomes = []
        for bucket in self.policy.buckets():
            try:
                self._sync_bucket(bucket)
            except Exception as exc:
                outcomes.append(SyncOutcome(bucket, False, type(exc).__name__))
            else:
                outcomes.append(SyncOutcome(bucket, True))
        return outcomes

    def apply_policy_sync(self) -> None:
        """Run ``policy_sync: auto``: sync, then warn or raise as ``sync_fail`` says."""
        if (self.options.policy_sync or "manual") != "auto" or self.policy.legacy:
            return
        failed = [o for o in self.sync_policy() if not o.ok]
        if not failed:
            return
        names = ", ".join(f"{o.bucket} ({o.reason})" for o in failed)
        if (self.options.sync_fail or "warn") == "require":
            raise PolicySyncError(
                f"storage.{self.instance}: the access policy could not be pushed to: {names}"
            )
        logger.warning(
            "storage.%s: the access policy could not be pushed to: %s",
            self.instance,
            names,
            extra={"service": "storage", "instance": self.instance},
        )

    # ------------------------------------------------------------------ Django's API, guarded

    def _open(self, name: str, mode: str = "rb") -> Any:
        key = clean_key(name)
        if any(flag in mode for flag in "wax+"):
            self._authorize_write(key)
        else:
            self.authorize("read", key)
        return super()._open(key, mode)  # type: ignore[misc]

    def save(self, name: str | None, content: Any, max_length: int | None = None) -> str:
        """Django's ``save`` (a free name is chosen, never overwriting), key guarded first."""
        clean_key(content.name if name is None else name)
        return super().save(name, content, max_length=max_length)

    def get_available_name(self, name: str, max_length: int | None = None) -> str:
        """Django's free-name search; a subject view may write without being able to read."""
        if self._subject is _TRUSTED:
            return super().get_available_name(name, max_length)
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin._subject = _TRUSTED
        return super(Storage, twin).get_available_name(name, max_length)

    def _save(self, name: str, content: Any) -> str:
        key = clean_key(name)
        self._authorize_write(key)
        return super()._save(key, content)  # type: ignore[misc]

    def delete(self, name: str) -> None:
        key = clean_key(name)
        self.authorize("delete", key)
        super().delete(key)  # type: ignore[safe-super]

    def exists(self, name: str) -> bool:
        key = clean_key(name)
        self.authorize("read", key)
        return self._raw_exists(key)

    def _raw_exists(self, key: str) -> bool:
        return super().exists(key)  # type: ignore[safe-super]

    def size(self, name: str) -> int:
        key = clean_key(name)
        self.authorize("read", key)
        return super().size(key)  # type: ignore[safe-super]

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        prefix = clean_prefix(path)
        self.authorize("read", prefix or "")
        return super().listdir(prefix)  # type: ignore[safe-super]

    def url(self, name: str | None) -> str:  # type: ignore[override]
        return self.link(name)  # type: ignore[arg-type]

    def get_modified_time(self, name: str) -> Any:
        key = clean_key(name)
        self.authorize("read", key)
        return super().get_modified_time(key)  # type: ignore[safe-super]

    def get_accessed_time(self, name: str) -> Any:
        return super().get_accessed_time(clean_key(name))  # type: ignore[safe-super]

    def get_created_time(self, name: str) -> Any:
        return super().get_created_time(clean_key(name))  # type: ignore[safe-super]

    def path(self, name: str) -> str:
        return super().path(clean_prefix(name))  # type: ignore[safe-super]

    # ------------------------------------------------------------------ adapter primitives

    def _scoped(self, bucket: str) -> Storage:
        raise NotImplementedError

    def _put(self, key: str, data: Any, content_type: str) -> None:
        raise NotImplementedError

    def _get(self, key: str) -> bytes:
        raise NotImplementedError

    def _presign(self, key: str, method: str, expires: int) -> str:
        raise NotImplementedError

    def _presign_put_bounded(self, key: str, expires: int, max_bytes: int) -> str:
        raise ValueError(f"storage: the {self.adapter_name} adapter's links cannot bound a PUT")

    def _public_link(self, key: str) -> str:
        raise NotImplementedError

    def _sync_bucket(self, bucket: str) -> None:
        raise NotImplementedError

    def ping(self) -> None:
        """Check the store answers (readiness)."""

    def close(self, **kwargs: Any) -> None:
        """Do nothing: Django holds the storage for the process."""

    def __repr__(self) -> str:
        where = f" bucket {self.bucket_name}" if getattr(self, "bucket_name", "") else ""
        return f"<{type(self).__name__} storage.{getattr(self, 'instance', '?')}{where}>"

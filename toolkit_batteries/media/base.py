"""The media service: images and videos kept in a storage-battery store, and their renditions.

A :class:`Media` object wraps one store of the storage battery (a Django storage with the
key guard, ``put``/``get`` and ``presign``): the ``local`` adapter's ``LocalStorage``
under ``root``, or the ``objstore`` adapter's ``S3Storage`` on ``bucket``.
:meth:`Media.on` gives the same service on another store (a bucket of the storage
battery), so an application keeps its uploads where the rest of its files are.

What it adds on top of the store:

* **Checked uploads**: :meth:`put_image` reads at most ``max_download_bytes``, refuses an
  image whose header announces more than ``max_pixels`` pixels before decoding it (a
  decompression bomb), accepts JPEG, PNG, WEBP and GIF only, decodes it once, then
  stores it. :meth:`put_video` probes with ffprobe and enforces ``max_duration``.
  Nothing is stored when a check refuses.
* **Renditions** (:meth:`rendition`, :meth:`thumbnail`, :meth:`poster`,
  :meth:`video_rendition`): derived objects stored beside the source under
  ``_derived/<digest of the key>/<spec>``. A rendition younger than ``derived_ttl`` and
  not older than its source is served as stored; otherwise it is derived again.
  Replacing or deleting a source drops its renditions.
* **URLs**: :meth:`url` is a presigned GET URL from the store, valid ``presign_ttl``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.storage.keys import InvalidKeyError, clean_key

from .errors import MediaDurationError, MediaError, MediaNotFoundError

if TYPE_CHECKING:
    from .options import MediaOptions

__all__ = ["DERIVED_PREFIX", "ImageInfo", "Media", "Rendition", "VideoInfo"]

logger = logging.getLogger("toolkit.media")

#: Where renditions live, in the store of their source.
DERIVED_PREFIX = "_derived/"

Data = bytes | bytearray | memoryview | IO[bytes]


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """A stored image: key, format (``JPEG``, ``PNG``, ``WEBP``, ``GIF``), pixels and bytes."""

    key: str
    format: str
    content_type: str
    width: int
    height: int
    size: int


@dataclass(frozen=True, slots=True)
class Rendition:
    """A derived object; ``derived`` tells whether this call made it (else it was cached)."""

    key: str
    width: int
    height: int
    format: str
    content_type: str
    derived: bool


@dataclass(frozen=True, slots=True)
class VideoInfo:
    """A stored video: its duration in seconds, first video stream's size and codec."""

    key: str
    duration: float
    width: int
    height: int
    codec: str
    format: str
    size: int


def _seconds(value: Any) -> float:
    return float(value.total_seconds()) if value else 0.0


class Media(Service):
    """Base of the media adapters: every operation, on the store an adapter opened."""

    service_name: ClassVar[str] = "media"

    #: Seconds ffprobe may run on one file.
    probe_timeout: float = 30.0
    #: Seconds ffmpeg may run for one poster frame or rendition.
    ffmpeg_timeout: float = 300.0

    def __init__(
        self,
        store: Any,
        options: MediaOptions,
        *,
        instance: str = "default",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.options = options
        self.instance = instance
        #: Wall-clock seconds; compared with stored objects' modification times.
        self.clock = clock
        self.max_pixels = int(options.max_pixels or 0)
        self.max_download_bytes = int(options.max_download_bytes or 0)
        self.derived_ttl = _seconds(options.derived_ttl)
        self.presign_ttl = max(1, int(_seconds(options.presign_ttl) or 3600))
        self.max_duration = _seconds(options.max_duration)

    @classmethod
    def warn_lifted_rules(cls, ctx: Any) -> None:
        """Log a warning at open when ``allow_private`` or ``allow_insecure`` is on."""
        options = ctx.options
        if options.allow_private or options.allow_insecure:
            ctx.logger.warning(
                "media.%s: allow_private or allow_insecure is on; the endpoint and fetched "
                "URLs may be plain http or on private addresses",
                ctx.instance,
                extra={"service": "media", "instance": ctx.instance},
            )

    @classmethod
    def aliased_store(cls, ctx: Any) -> Any:
        """Return ``storages[options.storage]`` (Django's object), or None when unset.

        With ``storage`` set, media keeps its files in a store ``STORAGES`` already
        declares (``slots.storages(TOOLKIT)``) instead of re-declaring its options; the
        alias must hold a storage-battery store.
        """
        alias = str(ctx.options.storage or "").strip()
        if not alias:
            return None
        from django.core.files.storage import InvalidStorageError, storages

        from toolkit_batteries.core.djangoready import ensure_django
        from toolkit_batteries.core.errors import InvalidOptionsError
        from toolkit_batteries.storage.base import Storage

        ensure_django()
        try:
            store = storages[alias]
        except InvalidStorageError:
            raise InvalidOptionsError(
                "media", "storage", "names no alias of settings.STORAGES", instance=ctx.instance
            ) from None
        if not isinstance(store, Storage):
            raise InvalidOptionsError(
                "media",
                "storage",
                "names a STORAGES alias that is not a storage-battery store",
                instance=ctx.instance,
            )
        return store

    # ------------------------------------------------------------------ identity

    @property
    def where(self) -> str:
        return f"media.{self.instance}"

    @property
    def storage(self) -> Any:
        """The storage-battery store this view reads and writes (a Django storage)."""
        return self.store

    def on(self, store: Any) -> Media:
        """Return this service working on ``store`` (a storage-battery store or bucket view)."""
        if not (hasattr(store, "put") and hasattr(store, "presign")):
            raise TypeError("media.on() takes a store of the storage battery")
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.store = store
        return view

    def __repr__(self) -> str:
        return f"<{type(self).__name__} media.{self.instance}>"

    # ------------------------------------------------------------------ keys and objects

    def _key(self, key: Any) -> str:
        return clean_key(key)

    def _source_key(self, key: Any) -> str:
        key = clean_key(key)
        if key.startswith(DERIVED_PREFIX):
            raise InvalidKeyError(f"media: keys under {DERIVED_PREFIX} are the renditions' own")
        return key

    def derived_prefix(self, key: str) -> str:
        """Return the prefix under which ``key``'s renditions are stored."""
        digest = hashlib.sha256(clean_key(key).encode("utf-8")).hexdigest()[:40]
        return f"{DERIVED_PREFIX}{digest}/"

    def get(self, key: str) -> bytes:
        """Return the bytes at ``key``; :class:`MediaNotFoundError` when there is none."""
        key = self._key(key)
        try:
            return self.store.get(key)
        except FileNotFoundError:
            raise MediaNotFoundError(f"{self.where}: no object at the key") from None

    def exists(self, key: str) -> bool:
        """Tell whether an object is stored at ``key``."""
        return bool(self.store.exists(self._key(key)))

    def delete(self, key: str) -> None:
        """Delete the object at ``key`` and its renditions (missing ones are no error)."""
        key = self._key(key)
        self.store.delete(key)
        if not key.startswith(DERIVED_PREFIX):
            self._drop_renditions(key)

    def url(self, key: str, *, expires: int | None = None) -> str:
        """Return a presigned GET URL for ``key`` (lifetime ``presign_ttl`` or ``expires`` s)."""
        key = self._key(key)
        return self.store.presign(key, expires=int(expires or self.presign_ttl))

    def _put(self, key: str, data: Any, content_type: str) -> None:
        self.store.put(key, data, content_type=content_type)

    def _drop_renditions(self, key: str) -> None:
        prefix = self.derived_prefix(key)
        try:
            _, files = self.store.listdir(prefix)
        except (FileNotFoundError, NotADirectoryError):
            return
        for name in files:
            self.store.delete(prefix + name)

    def modified(self, key: str) -> float | None:
        """Return the POSIX time ``key`` was last written, or ``None`` when it is absent."""
        key = self._key(key)
        store = self.store
        try:
            path = store.path(key)
        except NotImplementedError:
            path = None
        if path is not None:
            try:
                return os.stat(path).st_mtime
            except (FileNotFoundError, NotADirectoryError):
                return None
        client = getattr(store, "client", None)
        bucket = getattr(store, "bucket_name", "")
        if client is not None and bucket:
            import botocore.exceptions

            try:
                head = client.head_object(Bucket=bucket, Key=key)
            except botocore.exceptions.ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                if code in ("404", "NoSuchKey", "NotFound"):
                    return None
                raise
            return head["LastModified"].timestamp()
        if not store.exists(key):
            return None
        stamp: datetime = store.get_modified_time(key)
        if stamp.tzinfo is None:
            from django.utils import timezone

            stamp = timezone.make_aware(stamp)
        return stamp.timestamp()

    def _fresh(self, source: str, derived: str) -> bool:
        """Tell whether the stored rendition ``derived`` may be served for ``source``."""
        made = self.modified(derived)
        if made is None:
            return False
        if self.derived_ttl and self.clock() - made >= self.derived_ttl:
            return False
        changed = self.modified(source)
        if changed is None:
            raise MediaNotFoundError(f"{self.where}: no object at the key")
        return made >= changed

    # ------------------------------------------------------------------ images

    def put_image(self, key: str, data: Data, *, content_type: str = "") -> ImageInfo:
        """Check ``data`` is an accepted image within the limits, store it at ``key``.

        ``data``: bytes or a binary file (a Django ``UploadedFile`` too). The stored
        object is the original bytes, typed as the format Pillow detected (a client's
        ``content_type`` is never trusted: it is accepted for symmetry and ignored);
        its renditions from before are dropped.
        """
        from . import imaging
        from .fetch import read_bounded

        key = self._source_key(key)
        raw = read_bounded(data, self.max_download_bytes, where=self.where)
        imaging.allow_pixels(self.max_pixels)
        fmt, width, height = imaging.inspect(raw, self.max_pixels, where=self.where, decode=True)
        kind = imaging.INPUT_FORMATS[fmt]
        self._put(key, raw, kind)
        self._drop_renditions(key)
        return ImageInfo(key, fmt, kind, width, height, len(raw))

    def fetch_image(self, url: str, key: str) -> ImageInfo:
        """Download ``url`` through the outbound guard (bounded), then :meth:`put_image` it."""
        from .fetch import download

        key = self._source_key(key)
        body = download(
            url,
            self.max_download_bytes,
            where=self.where,
            allow_insecure=bool(self.options.allow_insecure),
            allow_private=bool(self.options.allow_private),
        )
        return self.put_image(key, body)

    def image_info(self, key: str) -> ImageInfo:
        """Return what the stored image's header says (nothing is decoded)."""
        from . import imaging

        key = self._key(key)
        raw = self.get(key)
        imaging.allow_pixels(self.max_pixels)
        fmt, width, height = imaging.inspect(raw, self.max_pixels, where=self.where)
        return ImageInfo(key, fmt, imaging.INPUT_FORMATS[fmt], width, height, len(raw))

    def rendition(
        self,
        key: str,
        width: int | None = None,
        height: int | None = None,
        *,
        fit: str = "contain",
        format: str | None = None,
        quality: int = 85,
        crop: tuple[int, int, int, int] | None = None,
        refresh: bool = False,
    ) -> Rendition:
        """Return a rendition of the image at ``key``, deriving it when none is fresh.

        ``fit``: ``contain`` (inside the box, aspect kept, never enlarged), ``cover``
        (fills the box, centre-cropped) or ``fill`` (stretched to the box). ``format``:
        ``jpeg``, ``png`` or ``webp`` (default: the source's; GIF gives PNG). ``crop``:
        ``(left, top, right, bottom)`` in source pixels, applied first. ``refresh``
        derives it again even when a fresh one is stored.
        """
        from . import imaging

        key = self._key(key)
        w, h, box = imaging.check_geometry(width, height, fit, quality, crop, self.max_pixels)
        source_format = self._format_from_key_or_store(key, format)
        fmt = imaging.output_format(format, source_format)
        geometry = imaging.Geometry(w, h, fit, fmt, quality, box)
        target = self.derived_prefix(key) + geometry.spec()
        content_type = imaging.OUTPUT_FORMATS[fmt][1]
        if not refresh and self._fresh(key, target):
            info = self._stored_size(target)
            if info is not None:
                return Rendition(target, info[0], info[1], fmt, content_type, False)
        raw = self.get(key)
        imaging.allow_pixels(self.max_pixels)
        body, out_w, out_h = imaging.render(raw, geometry, self.max_pixels, where=self.where)
        self._put(target, body, content_type)
        return Rendition(target, out_w, out_h, fmt, content_type, True)

    def thumbnail(
        self,
        key: str,
        width: int,
        height: int,
        *,
        format: str | None = None,
        fit: str = "cover",
    ) -> str:
        """Return the key of a ``width`` x ``height`` thumbnail (``cover`` by default)."""
        return self.rendition(key, width, height, fit=fit, format=format).key

    def _format_from_key_or_store(self, key: str, wanted: str | None) -> str:
        """Return the source's Pillow format when the output format must follow it."""
        if wanted is not None:
            return ""
        from . import imaging

        with self._open_source(key) as handle:
            fmt, _, _ = imaging.inspect(handle, self.max_pixels, where=self.where)
        return fmt

    def _open_source(self, key: str) -> IO[bytes]:
        """Open ``key`` for reading: the file itself where the store has paths (Pillow then
        reads only the header), else the object's bytes."""
        import io

        try:
            path = self.store.path(key)
        except NotImplementedError:
            return io.BytesIO(self.get(key))
        try:
            return open(path, "rb")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise MediaNotFoundError(f"{self.where}: no object at the key") from None

    def _stored_size(self, key: str) -> tuple[int, int] | None:
        from . import imaging

        try:
            raw = self.store.get(key)
        except FileNotFoundError:
            return None
        try:
            _, width, height = imaging.inspect(raw, 0, where=self.where)
        except MediaError:
            return None
        return width, height

    # ------------------------------------------------------------------ video

    def _check_duration(self, found: Any) -> None:
        if self.max_duration and found.duration > self.max_duration:
            raise MediaDurationError(
                f"{self.where}: the video lasts {found.duration:.1f}s, over max_duration "
                f"({self.max_duration:g}s)"
            )

    def _ffprobe(self, path: str) -> Any:
        """Run this instance's ffprobe (binary, timeout, name in errors) on a local file."""
        from . import video

        return video.probe(
            self.options.ffprobe or "ffprobe", path, timeout=self.probe_timeout, where=self.where
        )

    @contextlib.contextmanager
    def _probed_copy(self, key: str) -> Iterator[tuple[str, str, Any]]:
        """Yield ``(path, scratch dir, probe)`` of a local copy of the video, its length checked.

        Poster frames and renditions both start here, so ``max_duration`` is enforced on
        the source the same way before ffmpeg runs.
        """
        with (
            self._local_copy(key) as (path, _),
            tempfile.TemporaryDirectory(prefix="toolkit-media-") as scratch,
        ):
            found = self._ffprobe(path)
            self._check_duration(found)
            yield path, scratch, found

    def put_video(self, key: str, data: Data, *, content_type: str = "") -> VideoInfo:
        """Probe ``data`` with ffprobe, enforce ``max_duration``, store it at ``key``.

        The stored type is ``content_type`` if given, else the one of the container
        ffprobe found.
        """
        from .fetch import spool_bounded

        key = self._source_key(key)
        with spool_bounded(data, self.max_download_bytes, where=self.where) as spooled:
            found = self._ffprobe(spooled.name)
            self._check_duration(found)
            size = os.path.getsize(spooled.name)
            spooled.seek(0)
            self._put(key, spooled, content_type or _video_type(found.format))
        self._drop_renditions(key)
        return _video_info(key, found, size)

    def probe(self, key: str) -> VideoInfo:
        """Return what ffprobe says of the stored video at ``key``."""
        key = self._key(key)
        with self._local_copy(key) as (path, size):
            found = self._ffprobe(path)
        return _video_info(key, found, size)

    def poster(
        self,
        key: str,
        *,
        at: float = 0.0,
        width: int | None = None,
        height: int | None = None,
        format: str = "jpeg",
        fit: str = "contain",
        refresh: bool = False,
    ) -> str:
        """Return the key of a still frame of the video at ``key`` (``at`` seconds in).

        The frame is taken by ffmpeg, then sized and encoded as :meth:`rendition` does;
        it is cached for ``derived_ttl`` the same way.
        """
        from . import imaging, video

        key = self._key(key)
        if not isinstance(at, (int, float)) or isinstance(at, bool) or not 0 <= at < 86400:
            raise MediaError("media: at is a number of seconds from 0")
        fmt = imaging.output_format(format, "")
        if width is None and height is None:
            w, h, box = None, None, None
        else:
            w, h, box = imaging.check_geometry(width, height, fit, 85, None, self.max_pixels)
        geometry = imaging.Geometry(w, h, fit, fmt, 85, box)
        spec = geometry.spec() if (w or h) else f"full.{imaging.OUTPUT_FORMATS[fmt][2]}"
        target = f"{self.derived_prefix(key)}poster-t{at:.3f}-{spec}"
        if not refresh and self._fresh(key, target):
            return target
        with self._probed_copy(key) as (path, scratch, found):
            if at and found.duration and at >= found.duration:
                raise MediaError(f"{self.where}: at is past the end of the video")
            frame = os.path.join(scratch, "frame.png")
            video.extract_frame(
                self.options.ffmpeg or "ffmpeg",
                path,
                frame,
                at=float(at),
                timeout=self.ffmpeg_timeout,
                where=self.where,
            )
            with open(frame, "rb") as handle:
                raw = handle.read()
        imaging.allow_pixels(self.max_pixels)
        if w or h:
            body, _, _ = imaging.render(raw, geometry, self.max_pixels, where=self.where)
        else:
            full = imaging.Geometry(None, None, "contain", fmt, 85, None)
            body, _, _ = imaging.render(raw, full, self.max_pixels, where=self.where)
        self._put(target, body, imaging.OUTPUT_FORMATS[fmt][1])
        return target

    def video_rendition(
        self,
        key: str,
        *,
        width: int | None = None,
        height: int | None = None,
        format: str = "mp4",
        refresh: bool = False,
    ) -> str:
        """Return the key of a re-encoded copy (``mp4``: H.264/AAC, ``webm``: VP8/Vorbis).

        The box keeps the aspect ratio (sides rounded to even numbers); ``max_duration``
        is enforced on the source and caps the output's length.
        """
        from . import video

        key = self._key(key)
        fmt = str(format).lower()
        if fmt not in video.VIDEO_FORMATS:
            raise MediaError(f"media: format is one of {', '.join(video.VIDEO_FORMATS)}")
        for name, value in (("width", width), ("height", height)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 8192
            ):
                raise MediaError(f"media: {name} is a whole number of pixels from 2 to 8192")
        _, content_type, ext = video.VIDEO_FORMATS[fmt]
        target = f"{self.derived_prefix(key)}video-{width or 0}x{height or 0}.{ext}"
        if not refresh and self._fresh(key, target):
            return target
        with self._probed_copy(key) as (path, scratch, _):
            out = os.path.join(scratch, f"out.{ext}")
            video.transcode(
                self.options.ffmpeg or "ffmpeg",
                path,
                out,
                fmt=fmt,
                width=width,
                height=height,
                max_seconds=self.max_duration or None,
                timeout=self.ffmpeg_timeout,
                where=self.where,
            )
            with open(out, "rb") as handle:
                self._put(target, handle, content_type)
        return target

    def _local_copy(self, key: str) -> Any:
        """Context manager yielding ``(path, size)`` of a local file holding ``key``."""
        from .fetch import spool_bounded

        store = self.store

        @contextlib.contextmanager
        def copy() -> Any:
            try:
                path = store.path(key)
            except NotImplementedError:
                path = None
            if path is not None:
                if not os.path.isfile(path):
                    raise MediaNotFoundError(f"{self.where}: no object at the key")
                yield path, os.path.getsize(path)
                return
            with spool_bounded(self.get(key), 0, where=self.where) as spooled:
                yield spooled.name, os.path.getsize(spooled.name)

        return copy()

    # ------------------------------------------------------------------ lifecycle

    def ping(self) -> None:
        """Check the store answers (readiness)."""
        ping = getattr(self.store, "ping", None)
        if ping is not None:
            ping()

    def close(self) -> None:
        """Nothing to release: the store holds no process-wide resource of its own."""


def _video_type(format_name: str) -> str:
    names = set(format_name.split(","))
    if "webm" in names or "matroska" in names:
        return "video/webm" if "webm" in names else "video/x-matroska"
    if "mp4" in names or "mov" in names:
        return "video/mp4"
    return "application/octet-stream"


def _video_info(key: str, found: Any, size: int) -> VideoInfo:
    """Build the public answer for a probed video (``put_video`` and ``probe`` agree)."""
    return VideoInfo(
        key, found.duration, found.width, found.height, found.codec, found.format, size
    )

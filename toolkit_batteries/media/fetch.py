"""Bounded reads: uploads from bytes or file objects, and downloads through the outbound guard.

Every input is read at most ``limit + 1`` bytes deep, so an input over
``max_download_bytes`` is refused without holding more than the limit in memory.
Downloads use the toolkit's one outbound guard
(:func:`toolkit_batteries.core.outbound.urllib_opener.guarded_opener`): https only unless
``allow_insecure``, public addresses only (checked on every resolved address, at connect
time) unless ``allow_private``, no redirects, no proxy from the environment.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from typing import IO, Any
from urllib.parse import urlsplit

from .errors import MediaFetchError, MediaTooLargeError

__all__ = ["FETCH_TIMEOUT", "download", "read_bounded", "spool_bounded"]

#: Seconds a download may take to connect and between reads.
FETCH_TIMEOUT = 30.0
_CHUNK = 1 << 16


def _declared_size(data: Any) -> int | None:
    size = getattr(data, "size", None)  # Django's UploadedFile, File
    return size if isinstance(size, int) else None


def _too_large(where: str) -> MediaTooLargeError:
    return MediaTooLargeError(f"{where}: the input is larger than max_download_bytes")


def _bounded_chunks(
    data: bytes | bytearray | memoryview | IO[bytes], limit: int, *, where: str
) -> Iterator[bytes]:
    """Yield the bytes of ``data`` (bytes or a readable file), refusing past ``limit``.

    One reader for both the in-memory and the spooled copy, so a declared size over the
    limit is refused before a byte is read and a lying one after ``limit + 1`` bytes.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        if limit and len(data) > limit:
            raise _too_large(where)
        yield bytes(data)
        return
    declared = _declared_size(data)
    if limit and declared is not None and declared > limit:
        raise _too_large(where)
    if hasattr(data, "seek"):
        with contextlib.suppress(OSError, ValueError):
            data.seek(0)
    total = 0
    while True:
        chunk = data.read(_CHUNK if not limit else min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        if isinstance(chunk, str):
            raise MediaFetchError(f"{where}: the input is text; open the file in binary mode")
        total += len(chunk)
        if limit and total > limit:
            raise _too_large(where)
        yield chunk


def read_bounded(
    data: bytes | bytearray | memoryview | IO[bytes], limit: int, *, where: str
) -> bytes:
    """Return the bytes of ``data`` (bytes or a readable file), at most ``limit`` of them."""
    return b"".join(_bounded_chunks(data, limit, where=where))


def spool_bounded(
    data: bytes | bytearray | memoryview | IO[bytes], limit: int, *, where: str, suffix: str = ""
) -> Any:
    """Copy ``data`` into a named temporary file (at most ``limit`` bytes); return it, rewound."""
    out = tempfile.NamedTemporaryFile(prefix="toolkit-media-", suffix=suffix)  # noqa: SIM115
    try:
        for chunk in _bounded_chunks(data, limit, where=where):
            out.write(chunk)
        out.flush()
        out.seek(0)
        return out
    except BaseException:
        out.close()
        raise


def download(
    url: str, limit: int, *, where: str, allow_insecure: bool, allow_private: bool
) -> bytes:
    """Return the body at ``url`` (at most ``limit`` bytes), fetched through the guard.

    Messages never carry the URL (it may hold a token in its query).
    """
    import urllib.error
    import urllib.request

    from toolkit_batteries.core.outbound import is_blocked
    from toolkit_batteries.core.outbound.urllib_opener import guarded_opener

    parts = urlsplit(str(url or "").strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise MediaFetchError(f"{where}: the URL must be an http(s) URL with a host")
    if parts.username is not None or parts.password is not None:
        raise MediaFetchError(f"{where}: the URL must not carry credentials")
    opener = guarded_opener(allow_insecure=allow_insecure, allow_private=allow_private)
    request_ = urllib.request.Request(
        parts.geturl(), headers={"User-Agent": "django-toolkit-media", "Accept": "*/*"}
    )
    try:
        with opener.open(request_, timeout=FETCH_TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            if limit and length and length.isdigit() and int(length) > limit:
                raise _too_large(where)
            return read_bounded(response, limit, where=where)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise MediaFetchError(f"{where}: the server answered {exc.code}") from None
    except Exception as exc:
        if is_blocked(exc):
            reason = str(exc)
            option = (
                "allow_insecure" if "http" in reason and "insecure" in reason else "allow_private"
            )
            raise MediaFetchError(
                f"{where}: the URL was refused by the outbound rules; set {option} to permit it"
            ) from None
        if isinstance(exc, (urllib.error.URLError, OSError, TimeoutError)):
            raise MediaFetchError(f"{where}: the download failed ({type(exc).__name__})") from None
        raise

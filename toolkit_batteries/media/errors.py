"""Errors of the ``media`` battery: one class per refusal, each with a stable ``code``.

Every message names the service, the instance and the limit or option involved, never a
key's content, a URL or a value, so an error can be logged or returned to a client as is.
The HTTP status of each code comes from ``toolkit_batteries.core.errors.HTTP_STATUS``.
"""

from __future__ import annotations

from toolkit_batteries.core.errors import NotFoundError, ToolkitError

__all__ = [
    "ImageTooLargeError",
    "MediaDurationError",
    "MediaError",
    "MediaFetchError",
    "MediaNotFoundError",
    "MediaTimeoutError",
    "MediaTooLargeError",
    "MediaToolError",
    "UnsupportedMediaError",
]


class MediaError(ToolkitError):
    """Base of the media battery's errors; a bad argument unless a subclass says otherwise."""

    code = "invalid_argument"


class MediaTooLargeError(MediaError):
    """The input is larger than ``max_download_bytes``; nothing was stored."""

    code = "payload_too_large"


class ImageTooLargeError(MediaTooLargeError):
    """The image's header announces more pixels than ``max_pixels`` (a decompression bomb).

    Raised from the header alone, before a single pixel is decoded.
    """


class UnsupportedMediaError(MediaError):
    """The input is not an image or video of an accepted format, or it is corrupt."""

    code = "unsupported_media_type"


class MediaDurationError(MediaError):
    """The video lasts longer than ``max_duration``; nothing was stored."""


class MediaNotFoundError(NotFoundError, MediaError, FileNotFoundError):
    """No object at the key (also a ``FileNotFoundError``, as the storage battery raises)."""


class MediaFetchError(MediaError):
    """A URL fetch was refused by the outbound rules or failed; nothing was stored."""


class MediaToolError(MediaError):
    """ffmpeg or ffprobe failed on an input it accepted, or is missing."""

    code = "internal"


class MediaTimeoutError(MediaToolError):
    """ffmpeg or ffprobe ran past its time limit and was killed."""

    code = "deadline_exceeded"

"""The ``media`` battery: images and videos, checked on the way in, with cached renditions.

``services.media()`` returns a :class:`Media` on its own store (``local``: files under
``root``; ``objstore``: an object store's ``bucket``, both through the storage battery),
and ``services.media().on(services.storage().bucket("avatars"))`` works on a bucket of
the storage battery instead::

    media = services.media()
    info = media.put_image("avatars/42.png", request.FILES["avatar"])   # checked, stored
    thumb = media.thumbnail("avatars/42.png", 128, 128, format="webp")  # derived, cached
    link = media.url(thumb)                                             # presigned

Pillow (the ``media`` extra) and ffmpeg are used only when an image or a video is handled,
never at import.
"""

from __future__ import annotations

from .base import DERIVED_PREFIX, ImageInfo, Media, Rendition, VideoInfo
from .errors import (
    ImageTooLargeError,
    MediaDurationError,
    MediaError,
    MediaFetchError,
    MediaNotFoundError,
    MediaTimeoutError,
    MediaTooLargeError,
    MediaToolError,
    UnsupportedMediaError,
)

__all__ = [
    "DERIVED_PREFIX",
    "ImageInfo",
    "ImageTooLargeError",
    "Media",
    "MediaDurationError",
    "MediaError",
    "MediaFetchError",
    "MediaNotFoundError",
    "MediaTimeoutError",
    "MediaTooLargeError",
    "MediaToolError",
    "Rendition",
    "UnsupportedMediaError",
    "VideoInfo",
]

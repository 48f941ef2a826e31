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

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "DERIVED_PREFIX": "base",
    "ImageInfo": "base",
    "ImageTooLargeError": "errors",
    "Media": "base",
    "MediaDurationError": "errors",
    "MediaError": "errors",
    "MediaFetchError": "errors",
    "MediaNotFoundError": "errors",
    "MediaTimeoutError": "errors",
    "MediaTooLargeError": "errors",
    "MediaToolError": "errors",
    "Rendition": "base",
    "UnsupportedMediaError": "errors",
    "VideoInfo": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="DERIVED_PREFIX ImageInfo Media Rendition VideoInfo",
    errors=(
        "ImageTooLargeError MediaDurationError MediaError MediaFetchError MediaNotFoundError "
        "MediaTimeoutError MediaTooLargeError MediaToolError UnsupportedMediaError"
    ),
)

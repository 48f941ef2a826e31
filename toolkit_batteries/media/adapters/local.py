"""The ``local`` adapter: media under ``root`` on local disk, through the storage battery.

The store is the storage battery's ``LocalStorage`` under ``root`` (so the same key guard,
atomic writes and HMAC-presigned URLs apply), with presigned URLs under ``base_url``.
Mount the media view there so those URLs are served::

    path("media-assets/", include("toolkit_batteries.media.urls")),   # base_url "/media-assets"

Presigned URLs are signed with ``SECRET_KEY`` and salted with the media instance, so a
URL minted for media never opens an object of a storage instance, nor the reverse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base import Media

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["LocalMedia", "store_instance"]


def store_instance(instance: str) -> str:
    """Return the instance name of the store behind media instance ``instance``."""
    return f"media-{instance}"


class LocalMedia(Media):
    """Images and videos in files under ``root``."""

    adapter_name = "local"

    @classmethod
    def open(cls, ctx: OpenContext) -> LocalMedia:
        cls.warn_lifted_rules(ctx)
        store = cls.aliased_store(ctx) or cls.build_store(ctx.options, ctx.instance)
        return cls(store, ctx.options, instance=ctx.instance)

    @staticmethod
    def build_store(options: Any, instance: str) -> Any:
        """Return the storage battery's ``LocalStorage`` under ``root``."""
        from toolkit_batteries.core.djangoready import ensure_django
        from toolkit_batteries.core.errors import InvalidOptionsError
        from toolkit_batteries.storage.adapters.local import LocalStorage

        ensure_django()
        if not options.root:
            raise InvalidOptionsError(
                "media", "root", "is required by the local adapter", instance=instance
            )
        base = (options.base_url or "/media").rstrip("/") or "/"
        return LocalStorage(instance=store_instance(instance), root=options.root, url_base=base)

    def ping(self) -> None:
        """Check ``root`` exists or can be created."""
        self.store.ping()

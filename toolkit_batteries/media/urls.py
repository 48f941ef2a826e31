"""URL patterns of the ``local`` media adapter's presigned URLs (mount them at ``base_url``).

``include("toolkit_batteries.media.urls")`` serves instance ``default``;
``include(media_urls("videos"))`` serves another instance.
"""

from __future__ import annotations

from django.urls import URLPattern, path

from . import views

__all__ = ["media_urls", "urlpatterns"]


def media_urls(instance: str = "default") -> list[URLPattern]:
    """Return the patterns serving ``instance``'s presigned URLs."""
    return [
        path("<path:name>", views.serve, {"instance": instance}, name=f"toolkit-media-{instance}")
    ]


urlpatterns = media_urls()

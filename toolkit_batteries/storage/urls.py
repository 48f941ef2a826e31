"""URL patterns of the ``local`` storage's serving view (mount them at ``url_base``).

``include("toolkit_batteries.storage.urls")`` serves instance ``default``;
``include(storage_urls("uploads"))`` serves another instance.
"""

from __future__ import annotations

from django.urls import URLPattern, path

from . import views

__all__ = ["storage_urls", "urlpatterns"]


def storage_urls(instance: str = "default") -> list[URLPattern]:
    """Return the patterns serving ``instance``'s objects."""
    return [
        path(
            "<path:name>",
            views.serve,
            {"instance": instance},
            name=f"toolkit-storage-{instance}",
        )
    ]


urlpatterns = storage_urls()

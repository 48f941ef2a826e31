"""The media tests' live-server URLconf.

``/m/<instance>/`` serves a ``local`` media instance's presigned URLs; ``/media/<instance>/``
serves a storage instance's objects (for media working on a storage bucket).
"""

from __future__ import annotations

from django.urls import re_path

from toolkit_batteries.media import views as media_views
from toolkit_batteries.storage import views as storage_views

urlpatterns = [
    re_path(r"^m/(?P<instance>[a-z0-9_]+)/(?P<name>.+)$", media_views.serve),
    re_path(r"^media/(?P<instance>[a-z0-9_]+)/(?P<name>.+)$", storage_views.serve),
]

"""The storage tests' live-server URLconf: each instance's objects at /media/<instance>/."""

from __future__ import annotations

from django.urls import re_path

from toolkit_batteries.storage import views

urlpatterns = [
    re_path(r"^media/(?P<instance>[a-z0-9_]+)/(?P<name>.+)$", views.serve),
]

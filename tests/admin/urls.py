"""The test project's URLs with the Django admin at ``admin/`` (added unless already there)."""

from django.contrib import admin
from django.urls import path

from tests.urls import urlpatterns as project_urls

_mounted = any(str(pattern.pattern) == "admin/" for pattern in project_urls)
urlpatterns: list = [*project_urls, *([] if _mounted else [path("admin/", admin.site.urls)])]

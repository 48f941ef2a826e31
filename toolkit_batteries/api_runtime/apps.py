"""The Django app of the generated-API runtime (label ``toolkit_codegen_app``, kept as it was)."""

from __future__ import annotations

from django.apps import AppConfig


class ApiRuntimeConfig(AppConfig):
    """Provides ``manage.py compile_schema``; has no models."""

    name = "toolkit_batteries.api_runtime"
    label = "toolkit_codegen_app"
    verbose_name = "toolkit: schema compiler"

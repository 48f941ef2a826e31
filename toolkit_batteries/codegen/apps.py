"""The Django app of the schema compiler's integration (label ``toolkit_codegen_app``)."""

from __future__ import annotations

from django.apps import AppConfig


class CodegenConfig(AppConfig):
    """Provides ``manage.py compile_schema``; has no models."""

    name = "toolkit_batteries.codegen"
    label = "toolkit_codegen_app"
    verbose_name = "toolkit: schema compiler"

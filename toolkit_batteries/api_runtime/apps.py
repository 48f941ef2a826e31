"""The Django app of the generated-API runtime (label ``toolkit_codegen_app``, kept as it was)."""

from __future__ import annotations

from django.apps import AppConfig


class ApiRuntimeConfig(AppConfig):
    """Provides ``manage.py compile_schema``; has no models."""

    name = "toolkit_batteries.api_runtime"
    label = "toolkit_codegen_app"
    verbose_name = "toolkit: schema compiler"

    def ready(self) -> None:
        """Register the check that served ``permission: check`` rpcs do not fail open.

        It lives here, not in the permission battery, because it must also run when that
        battery is not installed (``toolkit_permission.E004``).
        """
        from django.core import checks

        from toolkit_batteries.core.checks import TAG
        from toolkit_batteries.permission.checks import fail_open_checks

        checks.register(fail_open_checks, TAG)
        # Handlers and jobs that no longer fit the schema (toolkit_codegen_app.E010/E011/W010).
        from .drift_checks import drift_checks

        checks.register(drift_checks, TAG)

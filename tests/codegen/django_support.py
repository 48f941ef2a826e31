"""Helpers of the Django backend tests: compile a schema into a throw-away app and serve it.

The generated app lives in a temporary package (``tkcg_<hex>.<label>``) put on
``sys.path`` and added to ``INSTALLED_APPS`` with ``override_settings``; ``migrate`` runs
its generated migration on the test database, and the app is migrated back to zero and
removed afterwards, so nothing leaks into other tests.
"""

from __future__ import annotations

import shutil
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks.registry import registry
from django.core.management import call_command
from django.test.utils import override_settings

from toolkit_batteries.api_runtime.project import plan
from toolkit_codegen.backends import BackendOptions, generate
from toolkit_codegen.compiler import load_paths

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCHEMAS = HERE / "schemas"
GOLDEN = HERE / "golden"
PROJECT = HERE / "django_project"
FIXTURES = ("spec_example", "every_feature", "multi_service")
DJANGO_BACKENDS = ("models", "migrations", "serializers", "views", "urls")
#: ``TOOLKIT`` of the served apps: the jwt auth adapter with a test secret.
TOOLKIT_AUTH = {"auth": {"adapter": "jwt", "options": {"jwt": {"secret": "x" * 32}}}}
SPECTACULAR = {"TITLE": "toolkit API", "VERSION": "0.0.0"}

_URLS = """\
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("api/schema/", SpectacularAPIView.as_view(urlconf="{module}.generated.urls")),
    path("", include("{module}.generated.urls")),
]
"""


def load(schema_dir: Path) -> Any:
    """Return the validated schema of a directory (failing the test on diagnostics)."""
    loaded = load_paths([schema_dir])
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    return loaded.schema


def backend_files(
    fixture: str, backend: str, options: BackendOptions | None = None
) -> dict[str, str]:
    """Return one backend's files for a fixture schema."""
    return generate(backend, load(SCHEMAS / fixture), options or BackendOptions())


@dataclass
class GeneratedApp:
    """A compiled app in a temporary package."""

    sys_path: Path
    package: str
    label: str

    @property
    def module(self) -> str:
        """Return the app's dotted path (its INSTALLED_APPS entry)."""
        return f"{self.package}.{self.label}"

    @property
    def app_dir(self) -> Path:
        """Return the app's directory."""
        return self.sys_path / self.package / self.label

    @property
    def urls(self) -> str:
        """Return the URLconf serving the app and its OpenAPI document."""
        return f"{self.package}.urls"


def build_app(
    tmp: Path, schema_dir: Path, label: str, handlers: Path | None = None
) -> GeneratedApp:
    """Compile ``schema_dir`` into a new app ``label`` under ``tmp`` (optionally with handlers)."""
    app = GeneratedApp(tmp, f"tkcg_{uuid.uuid4().hex[:10]}", label)
    app.app_dir.mkdir(parents=True)
    (app.app_dir.parent / "__init__.py").write_text("")
    (app.app_dir / "__init__.py").write_text("")
    if handlers is not None:
        shutil.copy(handlers, app.app_dir / "handlers.py")
    result = plan(schema_dir, app.app_dir, label, app.module)
    assert result.ok, [str(d) for d in result.diagnostics]
    result.write()
    (app.app_dir.parent / "urls.py").write_text(_URLS.format(module=app.module))
    return app


@contextmanager
def served_schema(
    root: Path,
    text: str,
    label: str,
    db_blocker: Any,
    handlers: str | None = None,
    toolkit: dict[str, Any] | None = None,
) -> Iterator[GeneratedApp]:
    """Compile schema ``text`` (and ``handlers`` source) into app ``label``; install it.

    The app is migrated and installed for the block, as a module fixture's app is, with
    ``TOOLKIT`` set to ``toolkit`` (the jwt auth block and more) when given.
    """
    schema_dir = root / "schema"
    schema_dir.mkdir(parents=True)
    (schema_dir / "app.toolkit").write_text(text)
    handlers_file = None
    if handlers is not None:
        handlers_file = root / "handlers.py"
        handlers_file.write_text(handlers)
    app = build_app(root / "app", schema_dir, label, handlers=handlers_file)
    app.schema_dir = schema_dir
    with installed(app, db_blocker):
        if toolkit is None:
            yield app
            return
        with override_settings(TOOLKIT=toolkit):
            yield app


@contextmanager
def installed(app: GeneratedApp, db_blocker: Any = None) -> Iterator[None]:
    """Install the app (and migrate it when ``db_blocker`` is given) for the block."""
    sys.path.insert(0, str(app.sys_path))
    # Re-populating INSTALLED_APPS runs every app's ready() again, which registers the
    # batteries' checks a second time; put the registry back as it was afterwards.
    saved_checks = (set(registry.registered_checks), set(registry.deployment_checks))
    override = override_settings(
        INSTALLED_APPS=[*settings.INSTALLED_APPS, app.module],
        ROOT_URLCONF=app.urls,
        TOOLKIT=TOOLKIT_AUTH,
        SPECTACULAR_SETTINGS=SPECTACULAR,
    )
    override.enable()
    try:
        if db_blocker is not None:
            with db_blocker.unblock():
                call_command("migrate", app.label, verbosity=0)
        yield
    finally:
        try:
            if db_blocker is not None:
                with db_blocker.unblock():
                    call_command("migrate", app.label, "zero", verbosity=0)
        finally:
            override.disable()
            registry.registered_checks, registry.deployment_checks = saved_checks
            # Forget the app's model classes, so a later app may reuse the label.
            apps.all_models.pop(app.label, None)
            apps.clear_cache()
            sys.path.remove(str(app.sys_path))
            for name in [m for m in sys.modules if m.split(".")[0] == app.package]:
                del sys.modules[name]

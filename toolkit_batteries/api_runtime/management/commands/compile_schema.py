"""``manage.py compile_schema``: compile ``<BASE_DIR>/schema/`` into the project's API app.

::

    python manage.py compile_schema              # into the app named by TOOLKIT_CODEGEN_APP ("api")
    python manage.py compile_schema --dry-run    # print what would change, write nothing
    python manage.py compile_schema --app shop

Writes the app's ``generated/`` modules, its next migration, and its ``models.py`` and
``handlers.py`` when they are missing (stubs for new rpcs are appended to an existing
``handlers.py``). Schema problems are printed one per line as ``file:line:col: [phase]
message`` and the command exits 3 having written nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

EXIT_INVALID = 3


class Command(BaseCommand):
    """Compile the schema into a Django app."""

    help = (
        "Compile schema/**/*.toolkit into the API app: generated models, serializers, views "
        "and urls, the next migration, and handler stubs."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        """Add ``--app``, ``--schema`` and ``--dry-run``."""
        parser.add_argument(
            "--app",
            default=None,
            help="app label to compile into (default: settings.TOOLKIT_CODEGEN_APP or 'api')",
        )
        parser.add_argument(
            "--schema",
            default=None,
            help="schema directory (default: <BASE_DIR>/schema)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="print what would change; write nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Plan the compile, print diagnostics or changes, and write unless dry-running."""
        from toolkit_batteries.api_runtime.project import display_path, plan
        from toolkit_batteries.api_runtime.settings import codegen_app_label

        label = codegen_app_label(options["app"])
        try:
            app = apps.get_app_config(label)
        except LookupError:
            raise CommandError(
                f'no installed app with label "{label}"; add it to INSTALLED_APPS or pass --app',
                returncode=EXIT_INVALID,
            ) from None
        base_dir = Path(getattr(settings, "BASE_DIR", Path.cwd()))
        schema_dir = Path(options["schema"]) if options["schema"] else base_dir / "schema"
        if not schema_dir.is_dir():
            raise CommandError(
                f"no schema directory at {schema_dir}; create schema/app.toolkit first",
                returncode=EXIT_INVALID,
            )
        result = plan(schema_dir, Path(app.path), app.label, app.name, base_dir=base_dir)
        for diagnostic in result.diagnostics:
            self.stderr.write(str(diagnostic), style_func=None)
        if not result.ok:
            errors = sum(1 for d in result.diagnostics if d.severity == "error")
            noun = "error" if errors == 1 else "errors"
            raise CommandError(
                f"schema has {errors} {noun}; nothing was written", returncode=EXIT_INVALID
            )
        changes = result.writes
        shown = {c.path: display_path(c.path, base_dir) for c in result.changes}
        verb = "would " if options["dry_run"] else ""
        for change in changes:
            self.stdout.write(f"{verb}{change.action} {shown[change.path]}")
        if options["dry_run"]:
            if not changes:
                self.stdout.write("nothing to change")
            return
        result.write()
        if not changes:
            self.stdout.write("nothing to change")
            return
        if any(c.is_migration for c in changes):
            self.stdout.write(self.style.SUCCESS("next: python manage.py migrate"))

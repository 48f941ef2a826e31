"""``manage.py db_seed [--app LABEL]``: run every app's ``seeds.run()``.

The contract with ``toolkit generate seed``: an installed app may have a ``seeds`` module
(``<app>/seeds.py`` or a ``seeds`` package) with a ``run()`` function taking no arguments.
Apps are visited project apps first (code under ``BASE_DIR``), then the others, each in
``INSTALLED_APPS`` order; ``django.*`` and ``toolkit_batteries.*`` are skipped. Each
``run()`` runs inside ``transaction.atomic()``, so a failing seed leaves nothing behind.
No seeds at all is an error (exit 1): a seed step that silently does nothing hides a
missing file.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from toolkit_batteries.core.commands import RunnerCommand
from toolkit_batteries.db.seeding import (
    EXIT_RUNTIME,
    EXIT_USAGE,
    NoSeedsError,
    SeedFailedError,
    add_seed_flags,
    find_seeds,
    run_one,
)


class Command(RunnerCommand):
    """Run the seeds of every installed app (or of one)."""

    help = "Run seeds.run() of every installed app, each inside transaction.atomic()."
    flags = add_seed_flags  # --app

    def handle(self, *args: Any, **options: Any) -> None:
        """Find the seeds and run them in order."""
        try:
            seeds = find_seeds(options["app"])
        except LookupError as exc:
            raise CommandError(str(exc.args[0]), returncode=EXIT_USAGE) from None
        except NoSeedsError as exc:
            raise CommandError(
                f"{exc} (`toolkit generate seed` writes one)", returncode=EXIT_RUNTIME
            ) from None
        for label, run in seeds:
            try:
                run_one(label, run)
            except SeedFailedError as exc:
                raise CommandError(str(exc), returncode=EXIT_RUNTIME) from None
            self.stdout.write(f"seeded {label}")
        self.stdout.write(f"ran {len(seeds)} seed module(s)")

"""``manage.py storage_sync_policy [instance ...]``: push the access policy to the store.

The manual half of ``policy_sync`` (``auto`` does the same when the storage opens). Prints
one line per bucket; exits non-zero when a bucket could not be synced.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Push each storage instance's access policy to its store (policy_sync manual)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("instances", nargs="*", help="storage instances (default: default)")

    def handle(self, *args: Any, **options: Any) -> None:
        from toolkit_batteries import services

        failed = 0
        for instance in options["instances"] or ["default"]:
            storage = services.storage(instance)
            if storage.policy.legacy:
                self.stdout.write(f"storage.{instance}: no policy (legacy private mode)")
                continue
            for outcome in storage.sync_policy():
                state = "synced" if outcome.ok else f"FAILED ({outcome.reason})"
                self.stdout.write(f"storage.{instance}: bucket {outcome.bucket}: {state}")
                failed += not outcome.ok
        if failed:
            raise CommandError(f"{failed} bucket policy sync(s) failed")

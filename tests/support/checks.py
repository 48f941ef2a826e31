"""Run one battery's Django system checks in a test, keeping only that battery's messages.

Every battery's ``test_checks`` filtered ``run_checks`` by its own label by hand; this is
the one copy, so a battery's check tests are only its table of blocks and expected IDs.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core import checks
from django.test import override_settings


def battery_messages(label: str) -> list[checks.CheckMessage]:
    """Return the messages app ``label`` (``toolkit_cache``, ...) reports under its own IDs."""
    app = apps.get_app_config(label)
    return [m for m in checks.run_checks(app_configs=[app]) if m.id.startswith(f"{label}.")]


def assert_checks(
    service: str, block: dict[str, Any], expected: list[str], *, secret: str | None = None
) -> list[checks.CheckMessage]:
    """Check ``block`` as the service's settings: the IDs are ``expected``, no ``secret`` shown.

    Returns the messages so a test can assert more about them (the field named, ...).
    """
    with override_settings(TOOLKIT={service: block}):
        found = battery_messages(f"toolkit_{service}")
    assert [m.id for m in found] == expected
    assert secret is None or all(secret not in str(m) for m in found)
    return found

"""What the permission battery adds to ``toolkit doctor``: a failed row per fail-open instance.

``toolkit doctor`` asks each battery for its ``doctor.doctor_rows()``
(:func:`~toolkit_batteries.core.catalog.battery_hook`), so the kernel never imports this
battery.
"""

from __future__ import annotations

from toolkit_batteries.core.doctor import Row

__all__ = ["doctor_rows"]


def doctor_rows() -> list[Row]:
    """Return a failed row per permission instance whose checks would fail open.

    ``manage.py check`` reports it (``toolkit_permission.E004`` outside development); the
    doctor shows it beside the services so ``doctor --strict`` fails on it too. In
    development (``W003``) it is no row: the schema may be written before the rules.
    """
    from django.core import checks

    from .checks import fail_open_checks

    return [
        Row("permission", "checks", "", ok=False, error=message.msg)
        for message in fail_open_checks()
        if message.level >= checks.ERROR and message.id == "toolkit_permission.E004"
    ]

"""System checks of the ``tenant`` battery (``manage.py check``).

After :class:`~toolkit_batteries.core.apps.BatteryConfig`'s own ``toolkit_tenant.E001``:

* ``toolkit_tenant.E002``: ``id`` is not a valid tenant id, or (``single``) not one of a
  non-empty ``allowed``.
* ``toolkit_tenant.E003``: ``subdomain_regex`` does not compile or has no group.
* ``toolkit_tenant.E004``: ``allowed`` holds a malformed tenant id.
* ``toolkit_tenant.E005``: ``header`` is not an HTTP header name.
* ``toolkit_tenant.W001``: ``single`` with ``header`` or ``subdomain_regex`` set (the
  single adapter reads neither).

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances

from .context import is_valid_tenant_id

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``tenant`` instance's id, pattern, allowed list and header name."""
    found: list[checks.CheckMessage] = []

    def error(message: str, hint: str, check_id: str) -> None:
        found.append(checks.Error(message, hint=hint, obj=_OBJ, id=check_id))

    for cfg, adapter in resolved_instances(config, "tenant"):
        where, options = f"tenant.{cfg.instance}", cfg.options
        allowed = tuple(options.allowed or ())
        if not is_valid_tenant_id(options.id):
            error(
                f'{where}: option "id" is not a valid tenant id',
                "use 1-63 letters, digits, _ or -, starting with a letter or digit",
                "toolkit_tenant.E002",
            )
        elif adapter == "single" and allowed and options.id not in allowed:
            error(
                f'{where}: option "id" is not one of "allowed"',
                'add the id to "allowed", or leave "allowed" empty',
                "toolkit_tenant.E002",
            )
        if not all(is_valid_tenant_id(item) for item in allowed):
            error(
                f'{where}: option "allowed" holds a malformed tenant id',
                "use 1-63 letters, digits, _ or -, starting with a letter or digit",
                "toolkit_tenant.E004",
            )
        if adapter == "single" and (options.subdomain_regex or options.header):
            found.append(
                checks.Warning(
                    f'{where}: the single adapter reads neither "header" nor "subdomain_regex"',
                    hint='use adapter "header" to resolve tenants from requests',
                    obj=_OBJ,
                    id="toolkit_tenant.W001",
                )
            )
    return found

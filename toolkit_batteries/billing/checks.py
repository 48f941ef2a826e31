"""System checks of the ``billing`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_billing.E001`` (each instance's adapter resolves):

* ``toolkit_billing.E002``: ``billing_a`` without ``secret_key``, or ``billing_b``
  without ``api_key``.
* ``toolkit_billing.E003``: an ``endpoint`` that is not an https URL (http without
  ``allow_insecure``), carries credentials, a query or a fragment, or is a literal
  private address without ``allow_private``.
* ``toolkit_billing.E004``: ``max_webhook_bytes`` or ``webhook_tolerance`` is negative
  (zero means the default: 1 MiB, 5 minutes).
* ``toolkit_billing.W001``: ``billing_a``/``billing_b`` without ``webhook_secret``: every
  webhook will be refused.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import check_url

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"
_KEY_OF = {"billing_a": "secret_key", "billing_b": "api_key"}


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``billing`` instance's key, endpoint, webhook limits and secret."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "billing"):
        where, options = f"billing.{cfg.instance}", cfg.options
        key = _KEY_OF.get(adapter)
        if key and not (getattr(options, key) or "").strip():
            found.append(
                checks.Error(
                    f'{where}: option "{key}" is required by the {adapter} adapter',
                    hint=f"set BILLING__{cfg.instance.upper()}__{key.upper()}",
                    obj=_OBJ,
                    id="toolkit_billing.E002",
                )
            )
        if key and (options.endpoint or "").strip():
            try:
                check_url(
                    options.endpoint,
                    service="billing",
                    field="endpoint",
                    instance=cfg.instance,
                    allow_insecure=bool(options.allow_insecure),
                    allow_private=bool(options.allow_private),
                )
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="endpoint is an https:// URL without credentials; allow_insecure "
                        "permits http, allow_private private addresses",
                        obj=_OBJ,
                        id="toolkit_billing.E003",
                    )
                )
        tolerance = options.webhook_tolerance
        if int(options.max_webhook_bytes) < 0 or (
            tolerance is not None and tolerance.total_seconds() < 0
        ):
            found.append(
                checks.Error(
                    f'{where}: options "max_webhook_bytes" and "webhook_tolerance" must not be '
                    "negative",
                    obj=_OBJ,
                    id="toolkit_billing.E004",
                )
            )
        if key and not options.webhook_secret:
            found.append(
                checks.Warning(
                    f'{where}: option "webhook_secret" is empty: every {adapter} webhook '
                    "will be refused",
                    hint="set it to the endpoint's signing secret from the provider's dashboard",
                    obj=_OBJ,
                    id="toolkit_billing.W001",
                )
            )
    return found

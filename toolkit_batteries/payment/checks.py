"""System checks of the ``payment`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_payment.E001`` (each instance's adapter resolves):

* ``toolkit_payment.E002``: ``payment_a`` without ``secret_key``, or ``payment_b``
  without ``api_key``.
* ``toolkit_payment.E003``: ``endpoint`` is not usable (not https without
  ``allow_insecure``, credentials/query inside, a literal private address without
  ``allow_private``).
* ``toolkit_payment.E004``: ``max_webhook_bytes`` or ``webhook_tolerance`` is negative.
* ``toolkit_payment.W001``: a provider adapter without ``webhook_secret`` (every webhook
  will be refused).
* ``toolkit_payment.W002``: ``auto_approve`` on a provider adapter, which ignores it.
* ``toolkit_payment.E005`` (``check --deploy`` only, run by ``toolkit serve`` outside
  development): an instance uses the ``stub`` adapter outside development
  (:func:`development`: ``DEBUG``, or ``TOOLKIT_ENV`` ``dev``/``test``/``development``).
  The stub holds no funds and verifies no webhook signature; its webhook view refuses
  every delivery outside development.

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

__all__ = ["battery_checks", "deploy_checks", "development"]

_OBJ = "settings.TOOLKIT"
_KEY_FIELD = {"payment_a": "secret_key", "payment_b": "api_key"}


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``payment`` instance's key, endpoint, bounds and webhook secret."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "payment"):
        where, options = f"payment.{cfg.instance}", cfg.options
        key_field = _KEY_FIELD.get(adapter)
        if key_field and not getattr(options, key_field):
            found.append(
                checks.Error(
                    f'{where}: option "{key_field}" is required by the {adapter} adapter',
                    hint=f"set PAYMENT__{cfg.instance.upper()}__{key_field.upper()}",
                    obj=_OBJ,
                    id="toolkit_payment.E002",
                )
            )
        if key_field and options.endpoint:
            try:
                check_url(
                    options.endpoint,
                    service="payment",
                    field="endpoint",
                    instance=cfg.instance,
                    allow_insecure=options.allow_insecure,
                    allow_private=options.allow_private,
                )
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="an https:// URL without credentials; allow_insecure permits "
                        "http, allow_private private addresses",
                        obj=_OBJ,
                        id="toolkit_payment.E003",
                    )
                )
        tolerance = options.webhook_tolerance
        if int(options.max_webhook_bytes or 0) < 0 or (tolerance and tolerance.total_seconds() < 0):
            found.append(
                checks.Error(
                    f'{where}: option "max_webhook_bytes" or "webhook_tolerance" is negative',
                    obj=_OBJ,
                    id="toolkit_payment.E004",
                )
            )
        if key_field and not options.webhook_secret:
            found.append(
                checks.Warning(
                    f'{where}: option "webhook_secret" is empty: every webhook will be refused',
                    hint="copy the endpoint's signing secret from the provider's dashboard",
                    obj=_OBJ,
                    id="toolkit_payment.W001",
                )
            )
        if key_field and options.auto_approve:
            found.append(
                checks.Warning(
                    f'{where}: option "auto_approve" is set but the {adapter} adapter ignores it',
                    hint="auto_approve applies to the stub adapter only",
                    obj=_OBJ,
                    id="toolkit_payment.W002",
                )
            )
    return found


def development() -> bool:
    """Tell whether this is development: ``DEBUG``, or ``TOOLKIT_ENV`` dev/test/development."""
    from toolkit_batteries.serving import is_development

    return is_development()


def deploy_checks(config: Config) -> list[checks.CheckMessage]:
    """Report ``stub`` instances outside development (an error, as the crypto dev key)."""
    if development():
        return []
    return [
        checks.Error(
            f"payment.{cfg.instance}: the stub adapter is configured outside development; it "
            "holds no funds and verifies no webhook signature",
            hint=f"set PAYMENT__{cfg.instance.upper()}__ADAPTER to payment_a or payment_b "
            "(stripe, paddle), or TOOLKIT_ENV=dev for development",
            obj=_OBJ,
            id="toolkit_payment.E005",
        )
        for cfg, adapter in resolved_instances(config, "payment")
        if adapter == "stub"
    ]

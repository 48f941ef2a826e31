"""System checks of the ``ai`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_ai.E001`` (each instance's adapter resolves):

* ``toolkit_ai.W002``: ``api_key`` is empty (every provider needs one): a warning, as for
  ``auth``'s missing secret, so that an installed but unused app does not stop
  ``manage.py``; opening the service fails until it is set.
* ``toolkit_ai.E003``: ``base_url`` is not usable: not an https URL (http without
  ``allow_insecure``), carries credentials, a query or a fragment, or is a literal
  private or loopback address without ``allow_private``; or it is empty on ``llm_d``.
* ``toolkit_ai.E004``: ``llm_d`` without ``model`` (a compatible endpoint has no
  default model).
* ``toolkit_ai.W001``: ``insecure_skip_verify`` is on (TLS certificates not verified).

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


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``ai`` instance's key, base URL and model."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "ai"):
        where, options = f"ai.{cfg.instance}", cfg.options
        if not options.api_key:
            found.append(
                checks.Warning(
                    f'{where}: option "api_key" is not set; opening ai fails until the '
                    f"{adapter} adapter has one",
                    hint=f"set AI__{cfg.instance.upper()}__API_KEY (from a secret store, "
                    "never in code)",
                    obj=_OBJ,
                    id="toolkit_ai.W002",
                )
            )
        base_url = (options.base_url or "").strip()
        if base_url or adapter == "llm_d":
            try:
                check_url(
                    base_url,
                    service="ai",
                    field="base_url",
                    instance=cfg.instance,
                    allow_insecure=bool(options.allow_insecure),
                    allow_private=bool(options.allow_private),
                )
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="base_url is an https:// URL without credentials or query "
                        "(required by llm_d); allow_insecure permits http, allow_private "
                        "private and loopback addresses",
                        obj=_OBJ,
                        id="toolkit_ai.E003",
                    )
                )
        if adapter == "llm_d" and not (options.model or "").strip():
            found.append(
                checks.Error(
                    f'{where}: option "model" is required by the llm_d adapter',
                    hint="name the model the compatible endpoint serves",
                    obj=_OBJ,
                    id="toolkit_ai.E004",
                )
            )
        if options.insecure_skip_verify:
            found.append(
                checks.Warning(
                    f'{where}: option "insecure_skip_verify" is on: TLS certificates are '
                    "not verified",
                    hint="turn it off outside a test bench",
                    obj=_OBJ,
                    id="toolkit_ai.W001",
                )
            )
    return found

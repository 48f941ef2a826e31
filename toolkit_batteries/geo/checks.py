"""System checks of the ``geo`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_geo.E001`` (each instance's adapter resolves):

* ``toolkit_geo.E002``: ``geo_a`` without ``api_key``.
* ``toolkit_geo.E003``: ``base_url`` (``geo_a``) or ``endpoint`` (``geo_b``) breaks the
  outbound rules (http without ``allow_insecure``, a loopback or private literal host
  without ``allow_private``, credentials, query or fragment).
* ``toolkit_geo.E004``: ``geo_b`` without a usable ``user_agent``.
* ``toolkit_geo.E005``: the ``static`` adapter's ``path`` resolves outside the project
  root or names a file that does not exist.
* ``toolkit_geo.E006``: ``timeout`` or ``max_response_body`` is negative.

Messages name instances and fields, never values. Nothing connects; no file is parsed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import check_url

from .base import check_user_agent

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"
_DEFAULT_URLS = {
    "geo_a": ("base_url", "https://maps.googleapis.com"),
    "geo_b": ("endpoint", "https://nominatim.openstreetmap.org"),
}


def _static(where: str, path: str, instance: str) -> list[checks.CheckMessage]:
    from .adapters.static import guarded_path, project_root

    if not (path or "").strip():
        return []
    try:
        target = guarded_path(path.strip(), project_root(), instance=instance)
    except InvalidOptionsError as exc:
        reason = exc.reason
    else:
        if target.is_file():
            return []
        reason = "names a file that does not exist"
    return [
        checks.Error(
            f'{where}: option "path" {reason}',
            hint="point path at a JSON gazetteer file inside BASE_DIR, or leave it unset",
            obj=_OBJ,
            id="toolkit_geo.E005",
        )
    ]


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``geo`` instance's key, URL, user agent, file path and bounds."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "geo"):
        where = f"geo.{cfg.instance}"
        options = cfg.options
        if options.timeout.total_seconds() < 0 or int(options.max_response_body) < 0:
            found.append(
                checks.Error(
                    f'{where}: option "timeout" or "max_response_body" is negative',
                    hint="use a positive value, or 0 for the adapter's default",
                    obj=_OBJ,
                    id="toolkit_geo.E006",
                )
            )
        if adapter == "static":
            found.extend(_static(where, options.path, cfg.instance))
            continue
        if adapter not in _DEFAULT_URLS:
            continue
        if adapter == "geo_a" and not (options.api_key or "").strip():
            found.append(
                checks.Error(
                    f'{where}: option "api_key" is required by the geo_a adapter',
                    hint="set GEO__<INSTANCE>__API_KEY from your secret store",
                    obj=_OBJ,
                    id="toolkit_geo.E002",
                )
            )
        if adapter == "geo_b":
            try:
                check_user_agent(options.user_agent, cfg.instance)
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint='name your application, e.g. "myapp/1.0 (ops@example.com)"',
                        obj=_OBJ,
                        id="toolkit_geo.E004",
                    )
                )
        field, default = _DEFAULT_URLS[adapter]
        try:
            check_url(
                getattr(options, field) or default,
                service="geo",
                field=field,
                instance=cfg.instance,
                allow_insecure=bool(options.allow_insecure),
                allow_private=bool(options.allow_private),
            )
        except InvalidOptionsError as exc:
            found.append(
                checks.Error(
                    str(exc),
                    hint="use an https:// URL; http needs allow_insecure and a loopback or "
                    "private host allow_private",
                    obj=_OBJ,
                    id="toolkit_geo.E003",
                )
            )
    return found

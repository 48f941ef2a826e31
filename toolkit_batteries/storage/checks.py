"""System checks of the ``storage`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_storage.E001`` (each instance's adapter resolves):

* ``toolkit_storage.E002``: an object-store ``endpoint`` that breaks the outbound rules
  (not a URL, http without ``allow_insecure``, credentials, query); the address check
  after DNS resolution runs when the storage opens, since checks never connect.
* ``toolkit_storage.E003``: ``objstore_b`` without ``account_id`` or ``endpoint``, or an
  ``account_id`` that is not letters and digits.
* ``toolkit_storage.E004``: a ``policy`` entry with a schema version this release does
  not read.
* ``toolkit_storage.W001``: ``access_key_id`` and ``secret_access_key`` are not both set
  or both empty.
* ``toolkit_storage.W002``: ``sync_fail`` is set but ``policy_sync`` is not ``auto``, or
  ``policy_sync`` is ``auto`` with no ``policy`` (nothing to sync).
* ``toolkit_storage.W003``: ``local`` without ``root`` while ``MEDIA_ROOT`` is empty;
  opening the storage fails until one is set (a warning, so a project that never uses
  storage is not blocked).

Messages name instances and fields, never values.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.conf import settings
from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import ConfigurationError

from .policy import AccessPolicy

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"
_ACCOUNT = re.compile(r"[A-Za-z0-9]{1,64}")


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``storage`` instance's options (nothing connects)."""
    from .adapters.endpoint import check_endpoint

    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "storage"):
        where, options = f"storage.{cfg.instance}", cfg.options
        if adapter == "local" and not (options.root or getattr(settings, "MEDIA_ROOT", "")):
            found.append(
                checks.Warning(
                    f'{where}: option "root" is empty and MEDIA_ROOT is not set; opening storage '
                    "will fail until one is set",
                    hint="set root (or MEDIA_ROOT) to the directory objects live under",
                    obj=_OBJ,
                    id="toolkit_storage.W003",
                )
            )
        if adapter in ("objstore", "objstore_b") and options.endpoint:
            try:
                check_endpoint(
                    options.endpoint,
                    field="endpoint",
                    instance=cfg.instance,
                    allow_insecure=options.allow_insecure,
                    allow_private=True,  # the address check runs at open
                )
            except ConfigurationError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="use an https:// URL without credentials or query "
                        "(http needs allow_insecure)",
                        obj=_OBJ,
                        id="toolkit_storage.E002",
                    )
                )
        if (
            adapter == "objstore_b"
            and not options.endpoint
            and (not options.account_id or not _ACCOUNT.fullmatch(options.account_id))
        ):
            found.append(
                checks.Error(
                    f'{where}: option "account_id" is missing or not letters and digits',
                    hint="objstore_b needs its account id (or an endpoint)",
                    obj=_OBJ,
                    id="toolkit_storage.E003",
                )
            )
        try:
            AccessPolicy(options.policy, instance=cfg.instance)
        except ConfigurationError as exc:
            found.append(
                checks.Error(
                    str(exc), hint='use version "0" or "1"', obj=_OBJ, id="toolkit_storage.E004"
                )
            )
        sync = options.policy_sync or "manual"
        if (options.sync_fail and sync != "auto") or (sync == "auto" and not options.policy):
            found.append(
                checks.Warning(
                    f'{where}: "sync_fail" or "policy_sync" has no effect as configured',
                    hint="sync_fail applies with policy_sync auto; auto needs a policy",
                    obj=_OBJ,
                    id="toolkit_storage.W002",
                )
            )
    return found

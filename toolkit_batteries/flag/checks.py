"""System checks of the ``flag`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_flag.E002``: ``static.path`` names a file that does not exist.
* ``toolkit_flag.E003``: ``remotecfg`` without ``remotecfg.service_account``, or with one
  that names a missing file.
* ``toolkit_flag.E004``: ``remotecfg.endpoint`` is not an allowed URL (http without
  ``allow_insecure``, a loopback/private literal host without ``allow_private``).
* ``toolkit_flag.E005``: ``remotecfg.timeout`` or ``remotecfg.ttl`` is not positive.
* ``toolkit_flag.W001``: the service-account key file is readable by group or others.

Messages name instances and fields, never values. Nothing connects; no file is parsed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

from .options import DEFAULT_ENDPOINT
from .outbound import check_url

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``flag`` instance's file paths, URL and durations."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "flag"):
        where = f"flag.{cfg.instance}"
        if adapter == "static":
            path = cfg.options.static.path
            if path and not os.path.isfile(path):
                found.append(
                    checks.Error(
                        f'{where}: option "static.path" names a file that does not exist',
                        hint="point static.path at a JSON or TOML flag file, or leave it unset",
                        obj=_OBJ,
                        id="toolkit_flag.E002",
                    )
                )
            continue
        if adapter != "remotecfg":
            continue
        options = cfg.options.remotecfg
        account = options.service_account
        if not account or not os.path.isfile(account):
            reason = "is required" if not account else "names a file that does not exist"
            found.append(
                checks.Error(
                    f'{where}: option "remotecfg.service_account" {reason}',
                    hint="set it to the path of the service-account JSON key file",
                    obj=_OBJ,
                    id="toolkit_flag.E003",
                )
            )
        elif os.stat(account).st_mode & 0o077:
            found.append(
                checks.Warning(
                    f'{where}: the file of option "remotecfg.service_account" is readable by '
                    "group or others",
                    hint="chmod 600 the key file",
                    obj=_OBJ,
                    id="toolkit_flag.W001",
                )
            )
        try:
            check_url(
                options.endpoint or DEFAULT_ENDPOINT,
                "remotecfg.endpoint",
                allow_insecure=bool(options.allow_insecure),
                allow_private=bool(options.allow_private),
                instance=cfg.instance,
            )
        except InvalidOptionsError as exc:
            found.append(
                checks.Error(
                    str(exc),
                    hint="use an https:// URL; http needs remotecfg.allow_insecure and a "
                    "loopback or private host remotecfg.allow_private",
                    obj=_OBJ,
                    id="toolkit_flag.E004",
                )
            )
    return found

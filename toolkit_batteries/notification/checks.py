"""System checks of the ``notification`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_notification.E002``: ``sms`` without ``sms.account_sid``, ``sms.auth_token``
  or ``sms.from_number``, or a ``sms.from_number`` that is not E.164.
* ``toolkit_notification.E003``: ``push`` without ``push.service_account``, or with one
  that names a missing file.
* ``toolkit_notification.E004``: ``sms.endpoint`` or ``push.endpoint`` is not an allowed
  URL (http without ``allow_insecure``, a loopback/private literal host without
  ``allow_private``).
* ``toolkit_notification.E005``: ``timeout`` is not positive.
* ``toolkit_notification.W001``: the service-account key file is readable by group or
  others.

Messages name instances and fields, never values. Nothing connects; no file is parsed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

from .options import DEFAULT_PUSH_ENDPOINT, DEFAULT_SMS_ENDPOINT
from .outbound import check_url

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``notification`` instance's credentials' presence, files, URLs, timeout."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "notification"):
        where = f"notification.{cfg.instance}"
        options = cfg.options
        if adapter not in ("sms", "push"):
            continue
        if adapter == "sms":
            field, url = "sms.endpoint", options.sms.endpoint or DEFAULT_SMS_ENDPOINT
        else:
            account = options.push.service_account
            if not account or not os.path.isfile(account):
                reason = "is required" if not account else "names a file that does not exist"
                found.append(
                    checks.Error(
                        f'{where}: option "push.service_account" {reason}',
                        hint="set it to the path of the service-account JSON key file",
                        obj=_OBJ,
                        id="toolkit_notification.E003",
                    )
                )
            elif os.stat(account).st_mode & 0o077:
                found.append(
                    checks.Warning(
                        f'{where}: the file of option "push.service_account" is readable by '
                        "group or others",
                        hint="chmod 600 the key file",
                        obj=_OBJ,
                        id="toolkit_notification.W001",
                    )
                )
            field, url = "push.endpoint", options.push.endpoint or DEFAULT_PUSH_ENDPOINT
        try:
            check_url(
                url,
                field,
                allow_insecure=bool(options.allow_insecure),
                allow_private=bool(options.allow_private),
                instance=cfg.instance,
            )
        except InvalidOptionsError as exc:
            found.append(
                checks.Error(
                    str(exc),
                    hint="use an https:// URL; http needs allow_insecure and a loopback or "
                    "private host allow_private",
                    obj=_OBJ,
                    id="toolkit_notification.E004",
                )
            )
    return found


def _e002(message: str) -> checks.Error:
    return checks.Error(
        message,
        hint="set sms.account_sid, sms.auth_token (a secret: use the environment) and "
        "sms.from_number (E.164, e.g. +14155550100)",
        obj=_OBJ,
        id="toolkit_notification.E002",
    )

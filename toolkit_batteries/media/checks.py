"""System checks of the ``media`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_media.E001`` (each instance's adapter resolves):

* ``toolkit_media.E002``: ``objstore`` without ``bucket``, or a bucket name the object
  stores refuse.
* ``toolkit_media.E003``: an ``endpoint`` that breaks the outbound rules (not a URL,
  http without ``allow_insecure``, credentials, query); the address check after DNS
  resolution runs when the media service opens, since checks never connect.
* ``toolkit_media.W001``: the ``ffmpeg`` or ``ffprobe`` binary is not found (video calls
  fail until it is installed; images work without it).
* ``toolkit_media.W002``: ``access_key_id`` and ``secret_access_key`` are not both set
  or both empty.

Messages name instances and fields, never values.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import ConfigurationError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def _binary_found(name: str) -> bool:
    if os.sep in name:
        return os.path.isfile(name) and os.access(name, os.X_OK)
    return shutil.which(name) is not None


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``media`` instance's options (nothing connects)."""
    from toolkit_batteries.core.outbound import check_url
    from toolkit_batteries.storage.keys import InvalidKeyError, check_bucket_name

    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "media"):
        where, options = f"media.{cfg.instance}", cfg.options
        if adapter == "objstore" and not str(options.storage or "").strip():
            try:
                check_bucket_name(options.bucket)
            except InvalidKeyError:
                found.append(
                    checks.Error(
                        f'{where}: option "bucket" is missing or not a valid bucket name',
                        hint="objstore needs a bucket: 3 to 63 lower-case letters, digits, - or .",
                        obj=_OBJ,
                        id="toolkit_media.E002",
                    )
                )
            if options.endpoint:
                try:
                    check_url(
                        options.endpoint,
                        service="media",
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
                            id="toolkit_media.E003",
                        )
                    )
        for field in ("ffmpeg", "ffprobe"):
            if not _binary_found(getattr(options, field) or field):
                found.append(
                    checks.Warning(
                        f'{where}: the binary of option "{field}" is not found',
                        hint="install Debian's ffmpeg package (video calls fail without it)",
                        obj=_OBJ,
                        id="toolkit_media.W001",
                    )
                )
    return found

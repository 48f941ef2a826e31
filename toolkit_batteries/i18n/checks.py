"""System checks of the ``i18n`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_i18n.E002``: ``embed.dir`` names a directory that does not exist.
* ``toolkit_i18n.E003``: ``remote`` without ``remote.endpoint``, or one that is not an
  allowed URL (http without ``allow_insecure``, a loopback/private literal host without
  ``allow_private``).
* ``toolkit_i18n.E004``: ``remote.timeout`` or ``remote.max_in_flight`` is not positive.
* ``toolkit_i18n.W001``: an ``embed.dir`` is not in ``LOCALE_PATHS``, so Django's
  ``gettext`` and ``{% translate %}`` do not read the catalogs ``services.i18n()`` reads.

Messages name instances and fields, never values. Nothing connects; no catalog is read.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.conf import settings
from django.core import checks

from toolkit_batteries.core.checks import resolved_instances

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``i18n`` instance's directory, endpoint and bounds."""
    found: list[checks.CheckMessage] = []
    locale_paths = {os.path.abspath(str(p)) for p in getattr(settings, "LOCALE_PATHS", ())}
    for cfg, adapter in resolved_instances(config, "i18n"):
        where = f"i18n.{cfg.instance}"
        if adapter == "embed":
            directory = cfg.options.embed.dir
            if not directory:
                continue
            if not os.path.isdir(directory):
                found.append(
                    checks.Error(
                        f'{where}: option "embed.dir" names a directory that does not exist',
                        hint="point embed.dir at a directory of <locale>/LC_MESSAGES/django.mo",
                        obj=_OBJ,
                        id="toolkit_i18n.E002",
                    )
                )
            elif os.path.abspath(directory) not in locale_paths:
                found.append(
                    checks.Warning(
                        f'{where}: option "embed.dir" is not in LOCALE_PATHS, so Django\'s '
                        "gettext and {% translate %} do not read its catalogs",
                        hint="LOCALE_PATHS = [*i18n_locale_paths(TOOLKIT)] in settings.py",
                        obj=_OBJ,
                        id="toolkit_i18n.W001",
                    )
                )
            continue
    return found

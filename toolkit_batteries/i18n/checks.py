"""Behaviour check of ``i18n``; every ID is in docs/batteries/i18n.md, "Checks".

Shape rules are declared on the options. Here: ``W001``, an ``embed.dir`` that Django's
gettext does not read (not in ``LOCALE_PATHS``). Messages name fields, never values.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.conf import settings
from django.core import checks

from toolkit_batteries.core.checks import error, resolved_instances, warning

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


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
                    error(
                        "toolkit_i18n.E002",
                        f'{where}: option "embed.dir" names a directory that does not exist',
                        "point embed.dir at a directory of <locale>/LC_MESSAGES/django.mo",
                    )
                )
            elif os.path.abspath(directory) not in locale_paths:
                found.append(
                    warning(
                        "toolkit_i18n.W001",
                        f'{where}: option "embed.dir" is not in LOCALE_PATHS, so Django\'s '
                        "gettext and {% translate %} do not read its catalogs",
                        "LOCALE_PATHS = [*i18n_locale_paths(TOOLKIT)] in settings.py",
                    )
                )
            continue
    return found

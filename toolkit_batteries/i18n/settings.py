"""The bridge to Django's ``LOCALE_PATHS``: one catalog directory, two readers.

``settings.py``::

    LOCALE_PATHS = [*i18n_locale_paths(TOOLKIT)]

puts every ``embed`` instance's ``embed.dir`` in Django's search path, so Django's
``gettext``, ``ngettext`` and ``{% translate %}`` read the same compiled ``.mo`` files
``services.i18n().t(...)`` reads, and ``translation.override("fr")`` picks the locale of
both. ``toolkit_i18n.W001`` warns when an ``embed.dir`` is missing from ``LOCALE_PATHS``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from toolkit_batteries.core.config import Config

__all__ = ["i18n_locale_paths"]


def i18n_locale_paths(config: Config | Mapping[str, Any] | None = None) -> list[str]:
    """Return the absolute ``embed.dir`` of every ``embed`` instance (``default`` first).

    ``config`` is a loaded :class:`Config`, a ``TOOLKIT`` mapping (the environment applied
    on top) or ``None`` for ``settings.TOOLKIT``.
    """
    from toolkit_batteries.core.loading import adapter_table

    loaded = Config.of(config)
    paths: list[str] = []
    names = loaded.instances("i18n")
    for instance in ["default", *sorted(set(names) - {"default"})]:
        cfg = loaded.service("i18n", instance)
        adapter = adapter_table("i18n").names.get(str(cfg.adapter or "embed").strip().lower())
        if adapter != "embed" or not cfg.options.embed.dir:
            continue
        path = os.path.abspath(cfg.options.embed.dir)
        if path not in paths:
            paths.append(path)
    return paths

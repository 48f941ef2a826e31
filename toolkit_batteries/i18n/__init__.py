"""The ``i18n`` battery: translation lookups that agree with Django's own.

Get the configured service from the registry (``services.i18n()``) or a container;
pick ``embed`` (the default: gettext ``.mo`` catalogs in a directory in Django's locale
layout, which ``LOCALE_PATHS = [*i18n_locale_paths(TOOLKIT)]`` also hands to Django's
``gettext`` and ``{% translate %}``) or ``remote`` (catalogs fetched per locale from a
translation service). ``locale=None`` follows Django's active language.
"""

from __future__ import annotations

from .base import Catalog, I18n, interpolate, normalize_locale, plural_rule
from .settings import i18n_locale_paths

__all__ = [
    "Catalog",
    "I18n",
    "i18n_locale_paths",
    "interpolate",
    "normalize_locale",
    "plural_rule",
]

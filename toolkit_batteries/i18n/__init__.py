"""The ``i18n`` battery: translation lookups that agree with Django's own.

Get the configured service from the registry (``services.i18n()``) or a container;
pick ``embed`` (the default: gettext ``.mo`` catalogs in a directory in Django's locale
layout, which ``LOCALE_PATHS = [*i18n_locale_paths(TOOLKIT)]`` also hands to Django's
``gettext`` and ``{% translate %}``) or ``remote`` (catalogs fetched per locale from a
translation service). ``locale=None`` follows Django's active language.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Catalog": "base",
    "I18n": "base",
    "i18n_locale_paths": "settings",
    "interpolate": "base",
    "normalize_locale": "base",
    "plural_rule": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

"""The ``i18n`` battery: translation lookups that agree with Django's own.

Get the configured service from the registry (``services.i18n()``) or a container;
pick ``embed`` (the default: gettext ``.mo`` catalogs in a directory in Django's locale
layout, which ``LOCALE_PATHS = [*i18n_locale_paths(TOOLKIT)]`` also hands to Django's
``gettext`` and ``{% translate %}``) or ``remote`` (catalogs fetched per locale from a
translation service). ``locale=None`` follows Django's active language.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Catalog I18n interpolate normalize_locale plural_rule",
    settings="i18n_locale_paths",
)

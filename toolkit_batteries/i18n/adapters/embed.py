"""The ``embed`` adapter: gettext catalogs from a directory Django reads too.

``embed.dir`` is a directory in Django's locale layout, ``<dir>/<locale>/LC_MESSAGES/
django.mo`` (what ``manage.py makemessages`` / ``compilemessages`` write), so the same
compiled files serve :meth:`~toolkit_batteries.i18n.base.I18n.t` and, once the directory
is in ``LOCALE_PATHS`` (``LOCALE_PATHS = [*i18n_locale_paths(TOOLKIT)]``), Django's
``gettext`` and ``{% translate %}``. ``toolkit_i18n.W001`` warns when it is not.

Catalogs are read with the standard library's ``gettext.GNUTranslations`` (the class
Django's own ``DjangoTranslation`` extends), eagerly at open: a lookup is two dictionary
reads. :meth:`EmbedI18n.reload` re-reads the directory.
"""

from __future__ import annotations

import gettext
import os
import threading
from pathlib import Path

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError

from ..base import Catalog, I18n, normalize_locale

__all__ = ["DOMAIN", "EmbedI18n", "read_catalogs"]

#: The gettext domain read (Django's).
DOMAIN = "django"


def read_catalogs(directory: str) -> dict[str, Catalog]:
    """Read every ``<locale>/LC_MESSAGES/django.mo`` under ``directory``."""
    found: dict[str, Catalog] = {}
    root = Path(directory)
    for entry in sorted(root.iterdir()) if root.is_dir() else []:
        path = entry / "LC_MESSAGES" / f"{DOMAIN}.mo"
        if not path.is_file():
            continue
        with path.open("rb") as handle:
            translations = gettext.GNUTranslations(handle)
        raw = translations._catalog  # type: ignore[attr-defined]  # Django merges it too
        messages: dict[str, str | tuple[str, ...]] = {}
        plurals: dict[str, dict[int, str]] = {}
        for key, value in raw.items():
            if isinstance(key, tuple):
                plurals.setdefault(key[0], {})[int(key[1])] = value
            elif key:
                messages[key] = value
        for key, forms in plurals.items():
            messages[key] = tuple(forms[i] for i in range(max(forms) + 1) if i in forms)
        locale = normalize_locale(entry.name)
        found[locale] = Catalog(locale, messages, translations.plural)  # type: ignore[attr-defined]
    return found


class EmbedI18n(I18n):
    """Catalogs compiled into a directory in Django's locale layout."""

    adapter_name = "embed"

    def __init__(self, *, directory: str, fallback: str = "", instance: str = "default") -> None:
        super().__init__(fallback=fallback, instance=instance)
        self.directory = directory
        self._lock = threading.Lock()
        self._catalogs: dict[str, Catalog] = read_catalogs(directory) if directory else {}

    @classmethod
    def open(cls, ctx: OpenContext) -> EmbedI18n:
        options = ctx.options.embed
        directory = str(options.dir or "")
        if directory and not os.path.isdir(directory):
            raise InvalidOptionsError(
                "i18n", "embed.dir", "names a directory that does not exist", instance=ctx.instance
            )
        return cls(directory=directory, fallback=str(options.fallback or ""), instance=ctx.instance)

    def _catalog(self, locale: str) -> Catalog | None:
        return self._catalogs.get(locale)

    def reload(self) -> None:
        """Re-read the directory (after ``compilemessages``)."""
        catalogs = read_catalogs(self.directory) if self.directory else {}
        with self._lock:
            self._catalogs = catalogs

    def locales(self) -> list[str]:
        return sorted(self._catalogs)

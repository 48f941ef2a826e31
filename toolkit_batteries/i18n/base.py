"""The i18n service: one key, one locale, one translated string.

::

    i18n = services.i18n()
    i18n.t("greeting")                                   # the active Django language
    i18n.t("greeting", locale="fr")                      # an explicit locale
    i18n.t("Hello %(name)s", name=user.first_name)       # interpolation
    i18n.t("%(count)s apple", count=3)                   # plural forms

**Locale.** ``locale=None`` means Django's active language
(``django.utils.translation.get_language()``), so a view under ``LocaleMiddleware`` or
code under ``translation.override("fr")`` gets the same language as ``gettext`` and
``{% translate %}``. Locales are normalized the way Django does (``pt-br`` -> ``pt_BR``).

**Fallback chain.** ``fr_CA`` -> ``fr`` -> the fallback locale (``embed.fallback``, else
Django's ``LANGUAGE_CODE``) -> its language. The first catalog holding the key answers.

**Missing keys.** A key no catalog in the chain holds answers ``default`` when one is
given, else the key itself (what ``gettext`` answers for an untranslated msgid), and is
logged once per (locale, key) at DEBUG on ``toolkit.i18n``. :meth:`I18n.get` answers
``None`` instead, and :meth:`I18n.has` tells whether a key is translated.

**Plural forms.** With ``count=n``, the catalog's plural rule (gettext's ``Plural-Forms``
header, e.g. ``nplurals=2; plural=(n > 1);``) picks the form; ``count`` is also available
to the message as ``%(count)s``.

**Interpolation.** Only ``%(name)s`` placeholders (Django's convention, which
``makemessages`` marks ``python-format``) and ``%%`` are replaced, by ``str(value)``.
Nothing in a translation can read attributes, index objects or apply format specs, and a
substituted value is never scanned again, so a translation or a user-supplied value
cannot inject a format string. Unknown placeholders stay as they are.

Adapters implement one primitive, :meth:`I18n._catalog`: the :class:`Catalog` of one
locale (or ``None``).
"""

from __future__ import annotations

import gettext as _gettext
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from django.conf import settings as _settings
from django.utils.translation import get_language as _get_language

from toolkit_batteries.core.adapter import Service

__all__ = ["Catalog", "I18n", "interpolate", "normalize_locale", "plural_rule"]

logger = logging.getLogger("toolkit.i18n")

_PLACEHOLDER = re.compile(r"%(?:\((?P<name>[A-Za-z_][A-Za-z0-9_]*)\)s|(?P<pct>%))")
_LOCALE = re.compile(r"^[A-Za-z]{2,8}(?:[_-][A-Za-z0-9]{1,8})*$")


def _germanic(n: int) -> int:
    return 0 if n == 1 else 1


def plural_rule(header: str) -> Callable[[int], int]:
    """Compile a gettext ``Plural-Forms`` header (``nplurals=2; plural=(n != 1);``).

    Uses the standard library's safe C-expression compiler; an empty or invalid header
    gives the Germanic rule (one form for 1, another for the rest).
    """
    match = re.search(r"plural\s*=\s*([^;]+)", header or "")
    if not match:
        return _germanic
    try:
        return _gettext.c2py(match.group(1).strip())  # type: ignore[attr-defined]
    except (ValueError, RecursionError):
        return _germanic


def normalize_locale(locale: str) -> str:
    """``pt-br`` -> ``pt_BR``, ``zh-hant`` -> ``zh_Hant`` (Django's ``to_locale``)."""
    from django.utils.translation import to_locale

    return to_locale(locale.strip())


def interpolate(text: str, params: Mapping[str, Any]) -> str:
    """Replace ``%(name)s`` with ``str(params[name])`` and ``%%`` with ``%`` (see module)."""
    if "%" not in text:
        return text

    def sub(match: re.Match[str]) -> str:
        if match.group("pct"):
            return "%"
        name = match.group("name")
        if name in params:
            return str(params[name])
        return match.group(0)

    return _PLACEHOLDER.sub(sub, text)


class Catalog:
    """The messages of one locale: ``key -> str`` or ``key -> tuple of plural forms``."""

    __slots__ = ("locale", "messages", "plural")

    def __init__(
        self,
        locale: str,
        messages: Mapping[str, str | tuple[str, ...]],
        plural: Callable[[int], int] = _germanic,
    ) -> None:
        self.locale = locale
        self.messages = dict(messages)
        self.plural = plural

    def lookup(self, key: str, count: int | None) -> str | None:
        value = self.messages.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            return value
        if not value:
            return None
        index = 0 if count is None else int(self.plural(int(count)))
        return value[index] if 0 <= index < len(value) else value[-1]


class I18n(Service):
    """Translation lookups with a fallback chain (see the module docstring)."""

    service_name: ClassVar[str] = "i18n"

    def __init__(self, *, fallback: str = "", instance: str = "default") -> None:
        self.instance = instance
        self.fallback = normalize_locale(fallback) if fallback else ""
        self._missing_logged: set[tuple[str, str]] = set()
        self._chains: dict[tuple[str, str], tuple[str, ...]] = {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} i18n.{self.instance}>"

    # -- the primitive -------------------------------------------------------------
    def _catalog(self, locale: str) -> Catalog | None:
        """Return the catalog of ``locale`` (normalized), or ``None`` if there is none."""
        raise NotImplementedError

    # -- operations ----------------------------------------------------------------
    def chain(self, locale: str | None = None) -> list[str]:
        """Return the locales tried for ``locale``, in order (see the module docstring)."""
        return list(self._chain(locale))

    def _chain(self, locale: str | None) -> tuple[str, ...]:
        if locale is None:
            locale = _get_language() or ""
        fallback = self.fallback or _settings.LANGUAGE_CODE
        key = (locale, fallback)
        found = self._chains.get(key)
        if found is not None:
            return found
        order: list[str] = []
        for name in (locale, fallback):
            name = normalize_locale(name) if name else ""
            if not name or not _LOCALE.match(name):
                continue
            for candidate in (name, name.split("_", 1)[0]):
                if candidate not in order:
                    order.append(candidate)
        if len(self._chains) >= 1024:
            self._chains.clear()
        found = self._chains[key] = tuple(order)
        return found

    def get(
        self, key: str, locale: str | None = None, *, count: int | None = None, **params: Any
    ) -> str | None:
        """Return the interpolated translation of ``key``, or ``None`` if none is found."""
        for name in self._chain(locale):
            catalog = self._catalog(name)
            if catalog is None:
                continue
            text = catalog.lookup(key, count)
            if text is not None:
                if count is not None:
                    params.setdefault("count", count)
                return interpolate(text, params)
        return None

    def has(self, key: str, locale: str | None = None) -> bool:
        """Tell whether some catalog in the chain of ``locale`` translates ``key``."""
        return self.get(key, locale) is not None

    def t(
        self,
        key: str,
        locale: str | None = None,
        *,
        count: int | None = None,
        default: str | None = None,
        **params: Any,
    ) -> str:
        """Translate ``key``; a missing key answers ``default``, else ``key`` (interpolated)."""
        text = self.get(key, locale, count=count, **params)
        if text is not None:
            return text
        marker = (locale or "", key)
        if marker not in self._missing_logged and len(self._missing_logged) < 10_000:
            self._missing_logged.add(marker)
            logger.debug("i18n.%s: no translation of %r for locale %r", self.instance, key, locale)
        if count is not None:
            params.setdefault("count", count)
        return interpolate(default if default is not None else key, params)

    def locales(self) -> list[str]:
        """Return the locales with a catalog (as far as known without fetching)."""
        return []

"""The translation service the i18n tests run against: the strict shared one.

:class:`FakeTranslationService` is :class:`tests.support.translation_server.TranslationServer`
(the ``remote`` adapter's documented format, refusing what it does not allow); the name
stays for the fixtures that use it.
"""

from __future__ import annotations

from tests.support.translation_server import TranslationServer

__all__ = ["FakeTranslationService"]

FakeTranslationService = TranslationServer

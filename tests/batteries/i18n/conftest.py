"""Open the i18n battery the real way (configuration, then a Container) on every adapter.

``embed`` reads ``.mo`` files compiled by GNU ``msgfmt`` from ``.po`` files written from
:data:`CATALOGS`; ``remote`` fetches the same catalogs as JSON from a
:class:`.server.FakeTranslationService` on 127.0.0.1 (so the tests set ``allow_insecure``
and ``allow_private``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import serving
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .server import FakeTranslationService

VARIANTS = ("embed", "remote")

EN_PLURAL = "nplurals=2; plural=(n != 1);"
FR_PLURAL = "nplurals=2; plural=(n > 1);"
PL_PLURAL = "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"

#: locale -> (Plural-Forms, messages); a list is the plural forms of a key.
CATALOGS: dict[str, tuple[str, dict[str, Any]]] = {
    "en": (
        EN_PLURAL,
        {
            "greeting": "Hello",
            "welcome": "Welcome, %(name)s!",
            "only_en": "English only",
            "apple": ["%(count)s apple", "%(count)s apples"],
            "%(count)s apple": ["%(count)s apple", "%(count)s apples"],
            "braces": "Value {0.__class__} and {name!r}",
        },
    ),
    "fr": (
        FR_PLURAL,
        {
            "greeting": "Bonjour",
            "welcome": "Bienvenue, %(name)s !",
            "apple": ["%(count)s pomme", "%(count)s pommes"],
            "%(count)s apple": ["%(count)s pomme", "%(count)s pommes"],
            "discount": "%(value)s %% de remise",
        },
    ),
    "fr_CA": (FR_PLURAL, {"greeting": "Allô"}),
    "pl": (
        PL_PLURAL,
        {
            "apple": ["%(count)s jabłko", "%(count)s jabłka", "%(count)s jabłek"],
            "%(count)s apple": ["%(count)s jabłko", "%(count)s jabłka", "%(count)s jabłek"],
        },
    ),
}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_catalogs(root: Path, catalogs: dict[str, tuple[str, dict[str, Any]]] = CATALOGS) -> Path:
    """Write ``<root>/<locale>/LC_MESSAGES/django.po`` and compile each with ``msgfmt``."""
    for locale, (plural, messages) in catalogs.items():
        folder = root / locale / "LC_MESSAGES"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            'msgid ""',
            'msgstr ""',
            '"Content-Type: text/plain; charset=UTF-8\\n"',
            f'"Language: {locale}\\n"',
            f'"Plural-Forms: {plural}\\n"',
            "",
        ]
        for key, value in messages.items():
            if isinstance(value, list):
                lines += [f"msgid {_quote(key)}", f"msgid_plural {_quote(key + 's')}"]
                lines += [f"msgstr[{i}] {_quote(form)}" for i, form in enumerate(value)]
            else:
                lines += [f"msgid {_quote(key)}", f"msgstr {_quote(value)}"]
            lines.append("")
        po = folder / "django.po"
        po.write_text("\n".join(lines), encoding="utf-8")
        subprocess.run(
            ["msgfmt", "--check-format", "-o", str(folder / "django.mo"), str(po)],
            check=True,
            timeout=30,
        )
    return root


@dataclass
class Opened:
    variant: str
    i18n: Any
    container: Container
    server: FakeTranslationService | None


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    return write_catalogs(tmp_path / "locale")


@pytest.fixture
def service() -> Iterator[FakeTranslationService]:
    yield from serving(FakeTranslationService(CATALOGS))


def remote_block(server: FakeTranslationService, **options: Any) -> dict[str, Any]:
    return {
        "adapter": "remote",
        "options": {
            "remote": {
                "endpoint": server.url,
                "allow_insecure": True,
                "allow_private": True,
                "timeout": "2s",
                **options,
            }
        },
    }


def embed_block(directory: Path, **options: Any) -> dict[str, Any]:
    return {"adapter": "embed", "options": {"embed": {"dir": str(directory), **options}}}


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opened]:
    server = None
    if request.param == "embed":
        block = embed_block(write_catalogs(tmp_path / "locale"), fallback="en")
    else:
        server = request.getfixturevalue("service")
        block = remote_block(server)
    container = Container(Config.load({"i18n": block}, {}))
    try:
        yield Opened(request.param, container.i18n(), container, server)
    finally:
        container.close()

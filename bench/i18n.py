"""i18n benchmarks: ``embed`` lookups per second against Django's ``gettext`` on the same
compiled catalog, in the same process.

* **explicit locale**: ``i18n.t(key, locale="fr")`` against ``gettext(key)`` with ``fr``
  activated once (Django's fastest path: no activation per call). Target: at least 0.5x.
* **active language**: ``i18n.t(key)`` under ``translation.override("fr")`` (the locale
  read from Django, as in a view) against the same ``gettext``. Target: at least 0.5x.
* **interpolated plural**: ``i18n.t("%(count)s apple", count=n)`` against
  ``ngettext(...) % {"count": n}``. Target: at least 0.5x.

The catalog (``fr``, 200 keys plus a plural) is written as ``.po``, compiled with GNU
``msgfmt`` and put in ``LOCALE_PATHS`` for Django and in ``embed.dir`` for the battery.
Runs of both sides are interleaved and the best of several repeats is kept.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from bench._measure import best_interleaved
from bench.foundation import Result

KEYS = [f"message.{i}" for i in range(200)]


def _catalog() -> Path:
    root = Path(tempfile.mkdtemp(prefix="toolkit-bench-i18n-"))
    folder = root / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    lines = [
        'msgid ""',
        'msgstr ""',
        '"Content-Type: text/plain; charset=UTF-8\\n"',
        '"Plural-Forms: nplurals=2; plural=(n > 1);\\n"',
        "",
    ]
    for key in KEYS:
        lines += [f'msgid "{key}"', f'msgstr "traduction de {key}"', ""]
    lines += [
        'msgid "%(count)s apple"',
        'msgid_plural "%(count)s apples"',
        'msgstr[0] "%(count)s pomme"',
        'msgstr[1] "%(count)s pommes"',
        "",
    ]
    (folder / "django.po").write_text("\n".join(lines), encoding="utf-8")
    subprocess.run(
        ["msgfmt", "-o", str(folder / "django.mo"), str(folder / "django.po")],
        check=True,
        timeout=30,
    )
    return root


def _setup():
    from django.test.utils import override_settings

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    root = _catalog()
    override = override_settings(LOCALE_PATHS=[str(root)])
    override.enable()
    block = {"adapter": "embed", "options": {"embed": {"dir": str(root)}}}
    return Container(Config.load({"i18n": block}, {})).i18n(), override


def _result(name: str, mine: float, theirs: float) -> Result:
    return Result(
        f"{name} ({mine / theirs:.2f}x)",
        mine,
        theirs,
        "lookups/s",
        ">= 0.5x gettext",
        mine >= 0.5 * theirs,
        number=",.0f",
    )


def bench_explicit_locale() -> Result:
    """Time ``t(key, locale="fr")`` against ``gettext(key)`` with ``fr`` active."""
    from django.utils import translation

    i18n, override = _setup()
    t = i18n.t
    gettext = translation.gettext

    def ours(rounds: int) -> None:
        for _ in range(rounds):
            for key in KEYS:
                t(key, "fr")

    def base(rounds: int) -> None:
        for _ in range(rounds):
            for key in KEYS:
                gettext(key)

    try:
        with translation.override("fr"):
            assert t(KEYS[0], "fr") == gettext(KEYS[0])
            mine, theirs = best_interleaved(ours, base, 50, per_unit=len(KEYS))
    finally:
        override.disable()
    return _result('embed t(key, "fr") vs gettext', mine, theirs)


def bench_active_language() -> Result:
    """Time ``t(key)`` under ``override("fr")`` against ``gettext(key)``."""
    from django.utils import translation

    i18n, override = _setup()
    t = i18n.t
    gettext = translation.gettext

    def ours(rounds: int) -> None:
        for _ in range(rounds):
            for key in KEYS:
                t(key)

    def base(rounds: int) -> None:
        for _ in range(rounds):
            for key in KEYS:
                gettext(key)

    try:
        with translation.override("fr"):
            assert t(KEYS[0]) == gettext(KEYS[0])
            mine, theirs = best_interleaved(ours, base, 50, per_unit=len(KEYS))
    finally:
        override.disable()
    return _result("embed t(key) (active language) vs gettext", mine, theirs)


def bench_plural() -> Result:
    """Time ``t("%(count)s apple", count=n)`` against ``ngettext(...) % {...}``."""
    from django.utils import translation

    i18n, override = _setup()
    t = i18n.t
    ngettext = translation.ngettext
    counts = range(len(KEYS))

    def ours(rounds: int) -> None:
        for _ in range(rounds):
            for n in counts:
                t("%(count)s apple", count=n)

    def base(rounds: int) -> None:
        for _ in range(rounds):
            for n in counts:
                ngettext("%(count)s apple", "%(count)s apples", n) % {"count": n}

    try:
        with translation.override("fr"):
            assert t("%(count)s apple", count=3) == "3 pommes"
            mine, theirs = best_interleaved(ours, base, 20, per_unit=len(KEYS))
    finally:
        override.disable()
    return _result("embed plural t(count=n) vs ngettext %", mine, theirs)


BENCHMARKS = (bench_explicit_locale, bench_active_language, bench_plural)

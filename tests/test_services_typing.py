"""``services.<battery>()`` is typed with the battery's public class, and returns one.

A type checker run on a user's snippet reveals each landed battery's public class (not
``Any``), and at run time every accessor returns an instance of exactly that class, so
the annotation an editor completes from is the truth.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

from toolkit_batteries import services
from toolkit_batteries.core.catalog import SERVICES
from toolkit_batteries.core.stubs import render as render_stubs

ROOT = Path(__file__).resolve().parent.parent

#: Each battery and the public class its accessor is typed with, as the catalog says, read
#: through the package's public export (``toolkit_batteries.cache.Cache``).
EXPECTED = {name: f"{spec.package}.{spec.base}" for name, spec in SERVICES.items()}


def test_the_catalog_names_each_batterys_public_class_where_it_is_defined() -> None:
    for spec in SERVICES.values():
        cls = public_class(spec.base_path)
        assert public_class(EXPECTED[spec.name]) is cls
        assert f"{cls.__module__}.{cls.__qualname__}" == spec.base_path


def test_the_stubs_on_disk_are_what_the_catalog_renders() -> None:
    """``services.pyi`` and ``_accessors.pyi`` are regenerated when the catalog changes."""
    for name, text in render_stubs().items():
        on_disk = (ROOT / "toolkit_batteries" / name).read_text(encoding="utf-8")
        assert on_disk == text, f"run python -m toolkit_batteries.core.stubs ({name})"
    assert all(f"def {name}(" in render_stubs()["services.pyi"] for name in SERVICES)


#: Zero-infrastructure settings under which every landed accessor opens.
TOOLKIT = {
    "auth": {"options": {"jwt": {"secret": "s" * 40}}},
    "crypto": {"options": {"allow_dev_key": True}},
    "ai": {"options": {"api_key": "sk-typing-test"}},  # the provider is never called
}


def public_class(dotted: str) -> type:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _revealed(tmp_path: Path, lines: list[str]) -> tuple[list[str], str]:
    """Run mypy on ``lines``; return the revealed types in order and mypy's output."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(snippet),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return re.findall(r'Revealed type is "([^"]+)"', result.stdout), result.stdout + result.stderr


@pytest.mark.parametrize(
    ("prelude", "receiver"),
    [
        (["from toolkit_batteries import services"], "services"),
        (
            [
                "from toolkit_batteries.core.config import Config",
                "from toolkit_batteries.core.container import Container",
                "c = Container(Config.load({}, {}))",
            ],
            "c",
        ),
    ],
    ids=["services", "container"],
)
def test_a_type_checker_sees_each_batterys_public_class(
    tmp_path: Path, prelude: list[str], receiver: str
) -> None:
    lines = [*prelude, ""]
    lines += [f"reveal_type({receiver}.{name}())" for name in EXPECTED]
    lines += [f'reveal_type({receiver}.queue("jobs"))', f"{receiver}.lock().no_such_method()"]
    revealed, output = _revealed(tmp_path, lines)
    assert len(revealed) == len(EXPECTED) + 1, output
    for (name, dotted), shown in zip(EXPECTED.items(), revealed, strict=False):
        # mypy names the defining module (toolkit_batteries.cache.base.Cache): the same class
        cls = public_class(dotted)
        assert shown == f"{cls.__module__}.{cls.__qualname__}", name
    assert revealed[-1] == revealed[list(EXPECTED).index("queue")]
    # A typo is caught, which an ``Any`` return would have let through.
    assert 'has no attribute "no_such_method"' in output


def test_a_type_checker_sees_the_classes_behind_each_packages_lazy_names(
    tmp_path: Path,
) -> None:
    """``from toolkit_batteries.cache import Cache`` is the class (``__init__.pyi``), not Any."""
    lines = [f"import toolkit_batteries.{name} as p_{name}" for name in SERVICES]
    lines += [f"reveal_type(p_{spec.name}.{spec.base})" for spec in SERVICES.values()]
    lines += ["p_cache.NoSuchName"]
    revealed, output = _revealed(tmp_path, lines)
    assert len(revealed) == len(SERVICES), output
    for spec, shown in zip(SERVICES.values(), revealed, strict=True):
        assert shown.endswith(f"-> {spec.base_path}"), (spec.name, shown)
    assert 'Module has no attribute "NoSuchName"' in output


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_accessor_returns_an_instance_of_its_public_class(
    name: str, tmp_path: Path, sqlite_dsn: str
) -> None:
    # the batteries whose default adapter keeps rows need a migrated database
    toolkit = {
        **TOOLKIT,
        "storage": {"options": {"root": str(tmp_path)}},
        "db": {"adapter": "sqlfile", "options": {"path": sqlite_dsn}},
    }
    with override_settings(TOOLKIT=toolkit):
        try:
            assert isinstance(getattr(services, name)(), public_class(EXPECTED[name]))
        finally:
            services.close()


def test_importing_services_imports_no_battery_module() -> None:
    """The annotations are for type checkers only: the registry stays light to import."""
    code = (
        "import sys, toolkit_batteries.services\n"
        "heavy = [m for m in ('toolkit_batteries.cache', 'toolkit_batteries.queue',"
        " 'toolkit_batteries.auth', 'toolkit_batteries.scheduler') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr

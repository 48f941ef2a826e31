"""The kernel (``toolkit_batteries/core/``) imports no battery, ``TYPE_CHECKING`` included.

A battery depends on the kernel, never the other way round: a kernel that imported a
battery (even for an annotation) would tie every battery into one import circle and make
the kernel's tests load batteries. Anything a battery adds to the kernel's behaviour it
declares (the catalog row, its ``AppConfig``), and the kernel reads that declaration.
"""

from __future__ import annotations

import ast
from pathlib import Path

from toolkit_batteries.core.catalog import SERVICES

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "toolkit_batteries" / "core"
#: Every package under toolkit_batteries/ except the kernel: the 37 batteries and the
#: program packages (cli, api_runtime, management) that use them.
PACKAGES = {
    path.parent.name
    for path in (ROOT / "toolkit_batteries").glob("*/__init__.py")
    if path.parent.name != "core"
}


def imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """Return ``(line, absolute module)`` for every import in ``source``, at any depth.

    ``package`` is the dotted package the source lives in (relative imports resolve
    against it); ``from .. import cache`` yields ``toolkit_batteries.cache`` too.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def battery_imports(source: str, package: str) -> list[tuple[int, str]]:
    """Return ``(line, module)`` for each import of a battery (or program) package."""
    return [
        (line, module)
        for line, module in imported_modules(source, package)
        if module.split(".")[0] == "toolkit_batteries"
        and module.count(".")
        and module.split(".")[1] in PACKAGES
    ]


def test_the_walk_sees_absolute_relative_and_typing_only_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from ..cache import Cache\n"
        "from .. import queue\n"
        "if TYPE_CHECKING:\n"
        "    import toolkit_batteries.db.base\n"
        "def f():\n"
        "    from toolkit_batteries.auth.revocation import REVOCATION\n"
        "from . import catalog\n"
        "from toolkit_batteries import services\n"
        "from .outbound import guard\n"
    )
    found = battery_imports(source, "toolkit_batteries.core")
    assert [module for _, module in found] == [
        "toolkit_batteries.cache",
        "toolkit_batteries.cache.Cache",
        "toolkit_batteries.queue",
        "toolkit_batteries.db.base",
        "toolkit_batteries.auth.revocation",
        "toolkit_batteries.auth.revocation.REVOCATION",
    ]
    assert [line for line, _ in found] == [2, 2, 3, 5, 7, 7]
    # the same import one package down (core/outbound/) climbs one level more
    assert battery_imports("from ...cache import Cache\n", "toolkit_batteries.core.outbound")


def test_every_catalog_battery_is_a_package_the_walk_forbids() -> None:
    assert set(SERVICES) <= PACKAGES
    assert "core" not in PACKAGES


def test_no_kernel_module_imports_a_battery() -> None:
    modules = sorted([*CORE.rglob("*.py"), *CORE.rglob("*.pyi")])
    assert len(modules) > 20
    bad = [
        f"{path.relative_to(ROOT)}:{line} {module}"
        for path in modules
        for line, module in battery_imports(
            path.read_text(encoding="utf-8"),
            ".".join(path.relative_to(ROOT).parts[:-1]),
        )
    ]
    assert bad == [], "the kernel imports batteries:\n" + "\n".join(bad)

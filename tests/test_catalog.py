"""The catalog is the one list, and each battery package writes each public name once.

What is derived from :data:`~toolkit_batteries.core.catalog.SERVICES` (the product aliases,
the product shown for an adapter, ``toolkit new --list-batteries``, the docs index rows,
the typed stubs in ``tests/test_services_typing.py``) is checked against it here, and
:func:`~toolkit_batteries.core.exports.lazy_exports` keeps a battery's import free.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from toolkit_batteries.core.catalog import SERVICES, battery_hook, product_aliases
from toolkit_batteries.core.config_display import product_name
from toolkit_batteries.core.errors import UnknownAdapterError
from toolkit_batteries.core.exports import lazy_exports
from toolkit_batteries.core.loading import adapter_table, resolve_adapter

ROOT = Path(__file__).resolve().parent.parent
BATTERY_PACKAGES = sorted(
    path.parent.name
    for path in (ROOT / "toolkit_batteries").glob("*/__init__.py")
    if "lazy_exports(" in path.read_text(encoding="utf-8")
)


# --------------------------------------------------------------------------- lazy_exports


@pytest.fixture
def fake_package(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """Return a package ``fakepkg`` whose submodule ``.parts`` defines two names."""
    package = types.ModuleType("fakepkg")
    package.__path__ = []  # a package: submodules resolve against it
    parts = types.ModuleType("fakepkg.parts")
    parts.Widget = type("Widget", (), {})  # type: ignore[attr-defined]
    parts.LIMIT = 7  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fakepkg", package)
    monkeypatch.setitem(sys.modules, "fakepkg.parts", parts)
    public, getter, lister = lazy_exports("fakepkg", parts="Widget LIMIT")
    package.__all__, package.__getattr__, package.__dir__ = public, getter, lister  # type: ignore[attr-defined]
    return package


def test_a_name_is_read_from_its_submodule_and_then_cached(
    fake_package: types.ModuleType,
) -> None:
    assert "Widget" not in vars(fake_package)
    assert fake_package.Widget is sys.modules["fakepkg.parts"].Widget  # type: ignore[attr-defined]
    assert vars(fake_package)["Widget"] is sys.modules["fakepkg.parts"].Widget  # type: ignore[attr-defined]
    assert fake_package.LIMIT == 7  # type: ignore[attr-defined]


def test_all_and_dir_list_the_exports(fake_package: types.ModuleType) -> None:
    assert fake_package.__all__ == ["LIMIT", "Widget"]  # type: ignore[attr-defined]
    assert {"LIMIT", "Widget"} <= set(dir(fake_package))


def test_an_unknown_name_is_an_attribute_error_naming_the_package(
    fake_package: types.ModuleType,
) -> None:
    with pytest.raises(AttributeError, match="module 'fakepkg' has no attribute 'Gadget'"):
        _ = fake_package.Gadget  # type: ignore[attr-defined]
    assert not hasattr(fake_package, "Gadget")


def test_a_name_exported_from_two_submodules_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'Widget' is exported by \.parts and \.other"):
        lazy_exports("fakepkg", parts="Widget", other="Gadget Widget")


def test_every_battery_export_resolves_and_importing_a_package_imports_none() -> None:
    """In a fresh interpreter: each package imports none of its submodules until asked.

    The exception is a name that is also its submodule's name (``resilience.backoff``,
    ``workflow.definition``): that one is bound at import, or a later import of the
    submodule would replace the exported function with the module.
    """
    code = (
        "import importlib, json, sys\n"
        f"names = {BATTERY_PACKAGES!r}\n"
        "before = set(sys.modules)\n"
        "loaded = {}\n"
        "for name in names:\n"
        "    importlib.import_module('toolkit_batteries.' + name)\n"
        "from toolkit_batteries.core.exports import EXPORTS\n"
        "# a name that is also its submodule's name is bound eagerly (see lazy_exports)\n"
        "eager = {f'{p}.{m}' for p, t in EXPORTS.items() for n, m in t.items() if n == m}\n"
        "new = sorted(m for m in set(sys.modules) - before - eager\n"
        "             if m.count('.') >= 2 and m.split('.')[1] in names)\n"
        "print(json.dumps(new))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == []
    assert len(BATTERY_PACKAGES) >= 37
    for name in BATTERY_PACKAGES:
        package = importlib.import_module(f"toolkit_batteries.{name}")
        assert package.__all__, name
        for export in package.__all__:
            assert getattr(package, export) is not None, (name, export)


# --------------------------------------------------------------------------- the catalog


def test_every_product_resolves_to_its_adapter_in_its_own_battery_only() -> None:
    for name, spec in SERVICES.items():
        table = adapter_table(name)
        for adapter, products in spec.products.items():
            if adapter not in table.adapters:
                continue  # an alias of another adapter in this battery (search's sqlfile)
            for product in products:
                assert table.names[product] == adapter, (name, product)
    # ``stripe`` names billing_a in billing and payment_a in payment; nothing in cache
    assert resolve_adapter("billing", "stripe")[0] == "billing_a"
    assert resolve_adapter("payment", "Stripe")[0] == "payment_a"
    assert product_aliases()["stripe"] == ("billing_a", "payment_a")
    with pytest.raises(UnknownAdapterError):
        resolve_adapter("cache", "stripe")
    # a product of one battery's ``remote`` is not a name of another battery's ``remote``
    (document_remote,) = SERVICES["document"].products["remote"]
    assert "remote" in adapter_table("i18n").adapters
    assert "remote" not in SERVICES["i18n"].products
    assert document_remote not in adapter_table("i18n").names


def test_the_product_shown_for_an_adapter_comes_from_the_catalog() -> None:
    for name, spec in SERVICES.items():
        for adapter in spec.adapters:
            assert product_name(adapter, name) == (spec.product(adapter) or adapter)
    assert product_name("kvserver") == "redis"
    assert product_name("sqlserver") == "postgres"
    assert product_name("payment_a") == "stripe"
    assert product_name("memory") == "memory"


def test_each_row_names_a_battery_that_exists() -> None:
    for name, spec in SERVICES.items():
        assert (ROOT / "toolkit_batteries" / name / "apps.py").is_file(), name
        assert spec.default_adapter == spec.adapters[0]
        assert set(spec.products) <= set(spec.adapters), name
        assert spec.base_path.startswith(f"toolkit_batteries.{name}.base.")


def test_a_battery_hook_is_found_by_path_and_absent_ones_are_none() -> None:
    from toolkit_batteries.permission.doctor import doctor_rows

    assert battery_hook("permission", "doctor", "doctor_rows") is doctor_rows
    assert battery_hook("cache", "doctor", "doctor_rows") is None  # no cache/doctor.py
    assert battery_hook("permission", "doctor", "no_such_hook") is None
    assert battery_hook("no_such_service", "doctor", "doctor_rows") is None


def test_the_docs_index_has_one_row_per_battery_naming_its_adapters() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    linked = {
        line.split("](batteries/")[1].split(".md)")[0]
        for line in index.splitlines()
        if line.startswith("| [batteries/")
    }
    assert linked == set(SERVICES)
    for name, spec in SERVICES.items():
        prefix = f"| [batteries/{name}.md](batteries/{name}.md) |"
        (row,) = [line for line in index.splitlines() if line.startswith(prefix)]
        assert f"`{name}`" in row, name
        implemented = adapter_table(name).adapters
        for adapter in (a for a in spec.adapters if a in implemented):
            product = spec.product(adapter)
            named = f"`{adapter}`" in row or (product is not None and product in row.lower())
            assert named, f"docs/index.md: the {name} row does not name {adapter}"
        assert (ROOT / "docs" / "batteries" / f"{name}.md").is_file()


def test_list_batteries_shows_the_products_first_as_the_catalog_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit_batteries.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["new", "--list-batteries"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:-1]
    shown = {line.split()[0]: line.split(None, 4)[4].split(", ") for line in lines}
    assert set(shown) == set(SERVICES)
    assert shown["payment"] == ["stripe (payment_a)", "paddle (payment_b)", "stub"]
    for name, spec in SERVICES.items():
        labelled = [item for item in shown[name] if "(" in item]
        # products first, each as the catalog names it, then the neutral adapters
        assert shown[name][: len(labelled)] == labelled, name
        for item in labelled:
            product, _, adapter = item.rstrip(")").partition(" (")
            assert spec.product(adapter) == product, (name, item)
        implemented = adapter_table(name).adapters
        assert {a for a in spec.products if a in implemented} == {
            item.rstrip(")").partition(" (")[2] for item in labelled
        }, name
    assert main(["--json", "new", "--list-batteries"]) == 0
    rows = json.loads(capsys.readouterr().out)["data"]["batteries"]
    for row in rows:
        spec = SERVICES[row["name"]]
        assert row["products"] == {a: spec.product(a) for a in spec.products}
    assert list(tmp_path.iterdir()) == []

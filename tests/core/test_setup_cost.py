"""What ``django.setup()`` pays for: registration only, the configuration layer on first use.

Issue 26 bounds the start-up cost of every battery app (< 40 ms over bare Django). The
cost is kept down by deferring, not by doing less: the container, the configuration
layer and the check implementations are imported when first used. These tests pin the
deferral (fresh interpreters, since this process has long imported everything) and that
each deferred piece still works when reached: a same-name export, the one ``Config`` that
``settings.py``'s slots and the container share.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit_batteries.core.catalog import SERVICES
from toolkit_batteries.core.config import Config

ROOT = Path(__file__).resolve().parents[2]

#: Modules a process needs only when it opens a service or runs ``manage.py check``.
DEFERRED = [
    "toolkit_batteries.core.config",
    "toolkit_batteries.core.container",
    "toolkit_batteries.core.groups",
    "toolkit_batteries.core.loading",
    "toolkit_batteries.core.option_checks",
    "toolkit_batteries.core.options",
    "toolkit_batteries.core.pools",
    "toolkit_batteries.core.topology",
    "toolkit_batteries.core.unsupported",
    "toolkit_batteries.resilience.backoff",
    "toolkit_batteries.workflow.definition",
]


def run(code: str) -> object:
    """Run ``code`` in a fresh interpreter at the repository root; return its JSON output."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


BATTERY_APPS = [
    spec.package
    for spec in SERVICES.values()
    if (ROOT / "toolkit_batteries" / spec.name / "apps.py").exists()
]
SETUP = (
    "import json, sys, django\n"
    "from django.conf import settings\n"
    f"apps = {BATTERY_APPS!r}\n"
    "settings.configure(INSTALLED_APPS=['django.contrib.contenttypes', 'django.contrib.auth',\n"
    "    'toolkit_batteries', *apps], DATABASES={}, USE_TZ=True)\n"
    "django.setup()\n"
    "import toolkit_batteries.services\n"
)


def test_setup_with_every_battery_imports_no_configuration_layer() -> None:
    code = SETUP + f"print(json.dumps(sorted(set({DEFERRED!r}) & set(sys.modules))))\n"
    assert run(code) == []


def test_the_deferred_checks_run_and_then_load_their_modules() -> None:
    code = SETUP + (
        "from django.core import checks\n"
        "ids = sorted({m.id for m in checks.run_checks(tags=['toolkit'],\n"
        "    include_deployment_checks=True)})\n"
        "print(json.dumps([ids, 'toolkit_batteries.core.topology' in sys.modules,\n"
        "    'toolkit_batteries.core.unsupported' in sys.modules]))\n"
    )
    ids, topology, unsupported = run(code)  # type: ignore[misc]
    assert topology and unsupported
    # Defaults are valid: nothing reports a broken configuration (E001 of any battery).
    assert not [i for i in ids if i.endswith(".E001")]


@pytest.mark.parametrize(
    ("package", "name"), [("resilience", "backoff"), ("workflow", "definition")]
)
def test_an_export_named_as_its_submodule_stays_lazy_and_stays_the_export(
    package: str, name: str
) -> None:
    code = (
        "import json, sys, importlib, types\n"
        f"pkg = importlib.import_module('toolkit_batteries.{package}')\n"
        f"lazy = 'toolkit_batteries.{package}.{name}' not in sys.modules\n"
        "# the import system binds the loaded submodule on its package: the export wins\n"
        f"importlib.import_module('toolkit_batteries.{package}.{name}')\n"
        f"from toolkit_batteries.{package} import {name} as got\n"
        f"print(json.dumps([lazy, isinstance(got, types.ModuleType), callable(got),\n"
        f"    getattr(pkg, '{name}') is got, '{name}' in pkg.__all__]))\n"
    )
    assert run(code) == [True, False, True, True, True]


# ------------------------------------------------------------------ one Config per TOOLKIT


def test_the_same_toolkit_mapping_is_loaded_once() -> None:
    toolkit = {"cache": {"adapter": "memory", "options": {"max_entries": 5}}}
    first = Config.of(toolkit)
    assert Config.of(toolkit) is first
    assert first.service("cache").options.max_entries == 5


def test_a_mapping_changed_in_place_is_loaded_again() -> None:
    toolkit = {"cache": {"adapter": "memory", "options": {"max_entries": 5}}}
    first = Config.of(toolkit)
    toolkit["cache"]["options"]["max_entries"] = 9
    again = Config.of(toolkit)
    assert again is not first
    assert again.service("cache").options.max_entries == 9


def test_a_changed_environment_is_loaded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    toolkit = {"cache": {"adapter": "memory"}}
    first = Config.of(toolkit)
    monkeypatch.setenv("CACHE__DEFAULT__MAX_ENTRIES", "77")
    again = Config.of(toolkit)
    assert again is not first
    assert again.service("cache").options.max_entries == 77

"""Packaging: the metadata in ``pyproject.toml`` and what the built wheel really contains.

The wheel is built once per run with ``pip wheel --no-deps`` (a few seconds): that is the
only way to know the project template and ``py.typed`` ship, since they are data files.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "project_template"


@pytest.fixture(scope="module")
def pyproject() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=110,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (path,) = out.glob("django_toolkit-0.8.0-*.whl")
    with zipfile.ZipFile(path) as zf:
        yield zf


def test_project_metadata(pyproject: dict) -> None:
    project = pyproject["project"]
    assert project["name"] == "django-toolkit"
    assert project["version"] == "0.8.0"
    assert project["license"] == "Apache-2.0"
    assert project["requires-python"] == ">=3.11"
    assert project["scripts"] == {"toolkit": "toolkit_batteries.cli:main"}
    assert any(dep.startswith("Django>=5.2") for dep in project["dependencies"])


def test_serve_extra_brings_gunicorn_and_dev_includes_it(pyproject: dict) -> None:
    extras = pyproject["project"]["optional-dependencies"]
    assert any(dep.startswith("gunicorn") for dep in extras["serve"])
    assert any("serve" in dep for dep in extras["dev"] if dep.startswith("django-toolkit["))


def test_wheel_metadata(wheel: zipfile.ZipFile) -> None:
    meta = Parser().parsestr(wheel.read("django_toolkit-0.8.0.dist-info/METADATA").decode())
    assert meta["Name"] == "django-toolkit"
    assert meta["Version"] == "0.8.0"
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta["Requires-Python"] == ">=3.11"
    entry_points = wheel.read("django_toolkit-0.8.0.dist-info/entry_points.txt").decode()
    assert "toolkit = toolkit_batteries.cli:main" in entry_points
    assert "django_toolkit-0.8.0.dist-info/licenses/LICENSE" in wheel.namelist()


def test_wheel_ships_the_whole_project_template_and_py_typed(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    template = {
        "toolkit_batteries/project_template/" + p.relative_to(TEMPLATE).as_posix()
        for p in TEMPLATE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert "toolkit_batteries/project_template/manage.py-tpl" in template
    assert "toolkit_batteries/project_template/schema/app.toolkit" in template
    assert template <= names, sorted(template - names)
    assert "toolkit_batteries/py.typed" in names
    assert "toolkit_batteries/cli/__init__.py" in names
    # the typed accessors (generated from the catalog) ship with the code they type
    assert {"toolkit_batteries/services.pyi", "toolkit_batteries/_accessors.pyi"} <= names


def test_wheel_holds_only_the_two_packages(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/", 1)[0] for name in wheel.namelist()}
    assert tops == {"toolkit_batteries", "toolkit_codegen", "django_toolkit-0.8.0.dist-info"}


def test_installed_package_finds_its_template() -> None:
    from importlib.resources import files

    template = files("toolkit_batteries") / "project_template"
    assert (template / "manage.py-tpl").is_file()
    assert (template / "project_name" / "settings.py-tpl").is_file()

"""What the scaffolding commands read about a project without setting Django up.

``add`` and ``generate`` edit text, so they never import the project's settings (a
project whose settings do not import yet can still be repaired with them); the few facts
they need are read from the files: where ``settings.py`` is, the settings package, the app
``compile_schema`` writes into, and whether a directory is one of the project's apps.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..output import CliError, InvalidInputError
from ..project import Project
from .names import check_identifier

__all__ = ["app_dir", "codegen_app", "package_of", "settings_file"]


def settings_file(project: Project) -> Path:
    """Return the file of the project's settings module (``demo/settings.py``)."""
    parts = project.settings_module.split(".")
    candidates = [
        project.root.joinpath(*parts[:-1], f"{parts[-1]}.py"),
        project.root.joinpath(*parts, "__init__.py"),
    ]
    for path in candidates:
        if path.is_file():
            return path
    raise CliError(
        f"cannot find the settings module {project.settings_module!r} under {project.root}",
        hint="run the command from the project that holds manage.py",
    )


def package_of(project: Project) -> str:
    """Return the project's settings package (``demo`` for ``demo.settings``)."""
    return project.settings_module.split(".")[0]


def codegen_app(project: Project) -> str:
    """Return ``TOOLKIT_CODEGEN_APP`` as the settings file (then the environment) sets it."""
    from toolkit_batteries.api_runtime.settings import CODEGEN_APP
    from toolkit_batteries.core.sidesettings import read_side_setting

    try:
        tree = ast.parse(settings_file(project).read_text(encoding="utf-8"))
    except (SyntaxError, CliError):
        return read_side_setting(CODEGEN_APP, None)
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "TOOLKIT_CODEGEN_APP" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return read_side_setting(CODEGEN_APP, node.value.value)
    return read_side_setting(CODEGEN_APP, None)


def app_dir(project: Project, app: str) -> Path:
    """Return the directory of the project's app ``app``; exit 3 when there is none."""
    check_identifier(app, "app name")
    path = project.root / app
    if not (path / "__init__.py").is_file():
        raise InvalidInputError(
            f"no app {app!r} in this project ({app}/__init__.py does not exist)",
            hint="create it with `python manage.py startapp " + app + "`",
        )
    return path

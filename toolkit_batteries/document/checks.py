"""Behaviour checks of ``document``; every ID is in docs/batteries/document.md, "Checks".

Shape rules (endpoint, binaries) are declared on the options. Here: ranges the renderer
enforces, the LaTeX sandbox and WeasyPrint. Nothing is imported from WeasyPrint, no
process starts; messages name fields, never values.
"""

from __future__ import annotations

import importlib.util
import shutil
from typing import TYPE_CHECKING

from toolkit_batteries.auth.policy import development_switch
from toolkit_batteries.core.checks import error, resolved_instances

from .base import MAX_DPI

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_MAX_RUNS = 10


def battery_checks(config: Config) -> list[CheckMessage]:
    """Check every ``document`` instance's ranges, sandbox and renderer library."""
    found: list[CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "document"):
        where, options = f"document.{cfg.instance}", cfg.options
        if not (
            0 <= int(options.dpi or 0) <= MAX_DPI and 0 <= int(options.latex_runs or 0) <= _MAX_RUNS
        ):
            found.append(
                error(
                    "toolkit_document.E003",
                    f'{where}: option "dpi" or "latex_runs" is out of range',
                    f"dpi is 1 to {MAX_DPI}; latex_runs is 0 (three passes) to {_MAX_RUNS}",
                )
            )
        mode = (options.latex_sandbox or "auto").strip().lower()
        required = mode == "required" or (mode == "auto" and not development_switch())
        if adapter == "latex" and required and shutil.which("bwrap") is None:
            found.append(
                error(
                    "toolkit_document.E004",
                    f'{where}: option "latex_sandbox" is {mode}'
                    + (" (required outside development)" if mode == "auto" else "")
                    + " but bwrap is not on PATH",
                    "install bubblewrap, or set latex_sandbox to auto",
                )
            )
        if adapter == "local" and importlib.util.find_spec("weasyprint") is None:
            found.append(
                error(
                    "toolkit_document.E005",
                    f"{where}: the local adapter needs WeasyPrint, which is not installed",
                    'pip install "django-toolkit[document]"',
                )
            )
    return found

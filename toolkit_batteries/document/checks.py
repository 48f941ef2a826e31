"""System checks of the ``document`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_document.E001`` (each instance's adapter resolves):

* ``toolkit_document.E002``: ``remote`` with an ``endpoint`` that is missing, not https
  (http without ``allow_insecure``), carries credentials, a query or a fragment, or is a
  literal private address without ``allow_private``.
* ``toolkit_document.E003``: ``dpi`` or ``latex_runs`` out of range.
* ``toolkit_document.E004``: ``latex`` with a ``latex_command`` not found on ``PATH``, or
  ``latex_sandbox`` ``required`` (or ``auto`` outside development, which means required)
  without ``bwrap`` on ``PATH``.
* ``toolkit_document.E005``: ``local`` without WeasyPrint installed (the ``document``
  extra).
* ``toolkit_document.W001``: the ``latex_pdf_to_ppm`` converter is not on ``PATH``: PDFs
  render, page images fail.
* ``toolkit_document.W002``: ``latex_allow_unsafe_source`` is on.

Messages name instances and fields, never values. Nothing connects, nothing is imported
from WeasyPrint and no process is started.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
from typing import TYPE_CHECKING, Any

from django.core import checks

from toolkit_batteries.auth.policy import development_switch
from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

from .base import MAX_DPI, check_endpoint

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"
_MAX_RUNS = 10


def _program(command: str, default: str) -> str | None:
    try:
        argv = shlex.split(command or default)
    except ValueError:
        return None
    return shutil.which(argv[0]) if argv else None


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``document`` instance's endpoint, ranges and binaries."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "document"):
        where, options = f"document.{cfg.instance}", cfg.options
        if adapter == "remote":
            found.extend(_endpoint_checks(cfg.instance, options))
        if (
            not 0 <= int(options.dpi or 0) <= MAX_DPI
            or not 0 <= int(options.latex_runs or 0) <= _MAX_RUNS
        ):
            found.append(
                checks.Error(
                    f'{where}: option "dpi" or "latex_runs" is out of range',
                    hint=f"dpi is 1 to {MAX_DPI}; latex_runs is 0 (three passes) to {_MAX_RUNS}",
                    obj=_OBJ,
                    id="toolkit_document.E003",
                )
            )
        if adapter == "latex":
            found.extend(_latex_checks(where, options))
        if adapter == "local" and importlib.util.find_spec("weasyprint") is None:
            found.append(
                checks.Error(
                    f"{where}: the local adapter needs WeasyPrint, which is not installed",
                    hint='pip install "django-toolkit[document]"',
                    obj=_OBJ,
                    id="toolkit_document.E005",
                )
            )
        if _program(options.latex_pdf_to_ppm, "pdftoppm") is None:
            found.append(
                checks.Warning(
                    f'{where}: option "latex_pdf_to_ppm" names a program not on PATH; '
                    "page images (png, jpeg) will fail",
                    hint="install poppler-utils (pdftoppm)",
                    obj=_OBJ,
                    id="toolkit_document.W001",
                )
            )
    return found


def _endpoint_checks(instance: str, options: Any) -> list[checks.CheckMessage]:
    try:
        check_endpoint(
            options.endpoint,
            allow_insecure=bool(options.allow_insecure),
            allow_private=bool(options.allow_private),
            instance=instance,
        )
    except InvalidOptionsError as exc:
        return [
            checks.Error(
                str(exc),
                hint="endpoint is the https:// URL of the rendering service without "
                "credentials; allow_insecure permits http, allow_private private addresses",
                obj=_OBJ,
                id="toolkit_document.E002",
            )
        ]
    return []


def _latex_checks(where: str, options: Any) -> list[checks.CheckMessage]:
    found: list[checks.CheckMessage] = []
    if _program(options.latex_command, "pdflatex") is None:
        found.append(
            checks.Error(
                f'{where}: option "latex_command" names a program not on PATH',
                hint="install texlive-latex-base (pdflatex)",
                obj=_OBJ,
                id="toolkit_document.E004",
            )
        )
    mode = (options.latex_sandbox or "auto").strip().lower()
    required = mode == "required" or (mode == "auto" and not development_switch())
    if required and shutil.which("bwrap") is None:
        found.append(
            checks.Error(
                f'{where}: option "latex_sandbox" is {mode}'
                + (" (required outside development)" if mode == "auto" else "")
                + " but bwrap is not on PATH",
                hint="install bubblewrap, or set latex_sandbox to auto",
                obj=_OBJ,
                id="toolkit_document.E004",
            )
        )
    return found

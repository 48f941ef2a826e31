"""Options of the ``document`` service (PDF and image rendering)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import program, required, url, warn_when_set
from toolkit_batteries.core.options import ByteSize, Duration, option, options_class

__all__ = ["DocumentOptions"]


_ENDPOINT_HINT = (
    "endpoint is the https:// URL of the rendering service without credentials; "
    "allow_insecure permits http, allow_private private addresses"
)


@options_class
class DocumentOptions(OutboundSwitches):
    """Options of ``document``; adapters ``local`` (default), ``remote`` and ``latex``."""

    __checks__ = (
        warn_when_set(
            "toolkit_document.W002",
            "is on: the LaTeX pre-scan is off",
            adapters=("latex",),
            hint="only for sources you wrote yourself; never for user input",
        ).on("latex_allow_unsafe_source"),
        required(
            "toolkit_document.E002",
            hint=_ENDPOINT_HINT,
            adapters=("remote",),
        ).on("endpoint"),
        url("toolkit_document.E002", adapters=("remote",), hint=_ENDPOINT_HINT).on("endpoint"),
        program(
            "toolkit_document.E004",
            "pdflatex",
            command=True,
            adapters=("latex",),
            hint="install texlive-latex-base (pdflatex)",
        ).on("latex_command"),
        program(
            "toolkit_document.W001",
            "pdftoppm",
            command=True,
            reason="names a program not on PATH; page images (png, jpeg) will fail",
            warning=True,
            hint="install poppler-utils (pdftoppm)",
        ).on("latex_pdf_to_ppm"),
    )

    tmp_dir: str = option("", doc="directory for intermediate artifacts")
    timeout: Duration = option(timedelta(seconds=30), doc="bound on render operations")
    quality: int = option(80, min=0, max=100, doc="raster quality, 0-100")
    dpi: int = option(150, doc="raster resolution")
    endpoint: str = option("", doc="remote render URL")
    api_key: str = option("", secret=True, doc="remote renderer key")
    latex_command: str = option("pdflatex", doc="LaTeX PDF compiler command")
    latex_pdf_to_ppm: str = option("pdftoppm", doc="PDF-to-image converter command")
    max_output_bytes: ByteSize = option(
        ByteSize(64 * 1024 * 1024), doc="bound on rendered output size"
    )
    latex_runs: int = option(0, doc="bound on compiler passes; 0 = the adapter's default")
    latex_sandbox: str = option(
        "auto",
        choices=("auto", "required", "off"),
        doc="OS sandbox: auto (required outside development), required or off",
    )
    latex_allow_unsafe_source: bool = option(
        False, doc="skip the source pre-scan (absolute or .. paths, shell escape); trusted only"
    )

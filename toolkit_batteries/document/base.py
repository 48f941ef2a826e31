"""The document service: HTML, a Django template or LaTeX rendered to PDF or page images.

::

    document = services.document()
    pdf = document.pdf("<h1>Invoice</h1>")                         # bytes of a PDF
    pages = document.images("<h1>Invoice</h1>", format="png")        # one PNG per page
    result = document.render_template("invoices/one.html", {"invoice": inv})
    result.data, result.page_count, result.media_type

The source is the adapter's language: HTML for ``local`` (WeasyPrint) and ``remote`` (a
rendering service), LaTeX for ``latex``. ``assets`` (``{"logo.png": b"..."}``) are the
only files a document may reference, by relative name; nothing is fetched from the
network and no other file is read.

Every render is bounded: ``timeout`` covers the whole operation (PDF and rasterising),
``max_output_bytes`` the PDF and the sum of the page images. Adapters implement
:meth:`Document._render_pdf`; this class validates arguments, enforces the bounds,
rasterises through ``pdftoppm`` (the ``latex_pdf_to_ppm`` option) and raises the errors
once for all of them. Errors name the service, the instance and the option, never the
document's content or an option's value.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidArgumentError, InvalidOptionsError, ToolkitError
from toolkit_batteries.core.outbound import check_url

__all__ = [
    "FORMATS",
    "Document",
    "DocumentError",
    "DocumentTimeoutError",
    "DocumentTooLargeError",
    "InvalidDocumentError",
    "RenderFailedError",
    "Rendered",
    "UnsafeSourceError",
    "check_endpoint",
]

#: Output formats and their media types: the PDF, or one image per page.
FORMATS: Mapping[str, str] = {
    "pdf": "application/pdf",
    "png": "image/png",
    "jpeg": "image/jpeg",
}
_FORMAT_ALIASES = {"jpg": "jpeg"}

#: Defaults applied when an option is zero (a zero value means "unset").
DEFAULT_TIMEOUT = 30.0
DEFAULT_DPI = 150
DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024
#: Highest accepted ``dpi`` (an A4 page at 2400 dpi is already about 80 megapixels).
MAX_DPI = 2400
#: Most assets one render accepts, and the longest asset name.
MAX_ASSETS = 256
_ASSET_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
_ASSET_NAME = re.compile(rf"{_ASSET_SEGMENT}(?:/{_ASSET_SEGMENT})*")


class DocumentError(ToolkitError):
    """Base of the document battery's runtime errors; messages never hold content."""

    code = "document_error"
    template = "document.{instance}: {message}"


class InvalidDocumentError(InvalidArgumentError, DocumentError):
    """A bad argument: an unknown format, a source that is not text, a bad asset name."""


class UnsafeSourceError(InvalidDocumentError):
    """The LaTeX pre-scan refused the source (shell escape, absolute or ``..`` paths)."""


class RenderFailedError(DocumentError):
    """The renderer ran and failed (a LaTeX error, an HTTP error from the service).

    ``detail`` holds the renderer's own first error line when there is one (a LaTeX
    ``! ...`` line), for logs; it is also in the message.
    """

    code = "invalid_argument"

    def __init__(self, instance: str, message: str, detail: str = "") -> None:
        self.detail = detail
        super().__init__(instance, f"{message}: {detail}" if detail else message)


class DocumentTooLargeError(DocumentError):
    """The output passed ``max_output_bytes``; nothing is returned."""

    code = "payload_too_large"


class DocumentTimeoutError(DocumentError, TimeoutError):
    """The render did not finish within ``timeout``; the renderer was stopped."""

    code = "deadline_exceeded"


@dataclass(frozen=True, slots=True)
class Rendered:
    """A rendered document: the PDF, or one image per page."""

    #: ``"pdf"``, ``"png"`` or ``"jpeg"``.
    format: str
    #: The PDF (one file), or the page images in page order.
    files: tuple[bytes, ...]
    #: Pages in the document; ``None`` when a remote PDF does not tell.
    page_count: int | None

    @property
    def data(self) -> bytes:
        """Return the PDF, or the first page's image."""
        return self.files[0]

    @property
    def media_type(self) -> str:
        """Return the output's media type (``application/pdf``, ``image/png``, ...)."""
        return FORMATS[self.format]

    @property
    def size(self) -> int:
        """Return the total size of the output in bytes."""
        return sum(len(item) for item in self.files)

    def __repr__(self) -> str:
        return (
            f"<Rendered format={self.format!r} files={len(self.files)} "
            f"pages={self.page_count} bytes={self.size}>"
        )


def seconds(value: Any, default: float) -> float:
    """Return a duration option in seconds (``default`` when zero or unset)."""
    if isinstance(value, timedelta):
        value = value.total_seconds()
    value = float(value or 0)
    return value if value > 0 else default


class Document(Service):
    """Render documents to PDF or page images within the configured bounds.

    Subclasses implement :meth:`_render_pdf`; everything else is shared.
    """

    service_name: ClassVar[str] = "document"

    #: The source language the adapter reads (``html`` or ``latex``), for messages.
    source_language: ClassVar[str] = "html"

    def __init__(self, options: Any, *, instance: str = "default") -> None:
        """Read the options every adapter shares; raise ``InvalidOptionsError`` on bad ones."""
        self.instance = instance
        self.timeout = seconds(options.timeout, DEFAULT_TIMEOUT)
        self.dpi = int(options.dpi or DEFAULT_DPI)
        if not 1 <= self.dpi <= MAX_DPI:
            raise InvalidOptionsError(
                "document", "dpi", f"must be between 1 and {MAX_DPI}", instance=instance
            )
        self.quality = int(options.quality or 0) or 80
        self.max_output_bytes = int(options.max_output_bytes or DEFAULT_MAX_OUTPUT_BYTES)
        self.tmp_dir = (options.tmp_dir or "").strip() or None
        self.pdf_to_ppm = (options.latex_pdf_to_ppm or "").strip() or "pdftoppm"

    # ------------------------------------------------------------------ public API

    def render(
        self,
        source: str,
        *,
        format: str = "pdf",
        assets: Mapping[str, bytes] | None = None,
    ) -> Rendered:
        """Render ``source`` to ``format`` (``pdf``, ``png`` or ``jpeg``).

        ``assets`` maps relative names (``img/logo.png``) to bytes the document may
        reference. Raises :class:`InvalidDocumentError` for bad arguments,
        :class:`DocumentTooLargeError`, :class:`DocumentTimeoutError`,
        :class:`RenderFailedError`.
        """
        fmt = self._check_format(format)
        if not isinstance(source, str):
            raise InvalidDocumentError(
                self.instance, f"the source must be {self.source_language} text (a str)"
            )
        checked = self._check_assets(assets)
        deadline = time.monotonic() + self.timeout
        pdf, pages = self._render_pdf(source, checked, deadline)
        self._check_size(len(pdf))
        if fmt == "pdf":
            return Rendered("pdf", (pdf,), pages)
        from .raster import rasterize

        images = rasterize(
            pdf,
            fmt,
            command=self.pdf_to_ppm,
            dpi=self.dpi,
            quality=self.quality,
            max_bytes=self.max_output_bytes,
            deadline=deadline,
            timeout=self.timeout,
            tmp_dir=self.tmp_dir,
            instance=self.instance,
        )
        return Rendered(fmt, tuple(images), len(images))

    def render_template(
        self,
        template_name: str | list[str],
        context: Mapping[str, Any] | None = None,
        *,
        request: Any = None,
        format: str = "pdf",
        assets: Mapping[str, bytes] | None = None,
    ) -> Rendered:
        """Render a Django template with ``context``, then the result as :meth:`render` does.

        For ``latex`` write the template under ``{% autoescape off %}`` and escape values
        with :func:`toolkit_batteries.document.latex_escape`: HTML escaping is wrong in TeX.
        """
        from django.template.loader import render_to_string

        text = render_to_string(template_name, dict(context or {}), request=request)
        return self.render(text, format=format, assets=assets)

    def pdf(self, source: str, *, assets: Mapping[str, bytes] | None = None) -> bytes:
        """Return the PDF of ``source``."""
        return self.render(source, format="pdf", assets=assets).data

    def images(
        self, source: str, *, format: str = "png", assets: Mapping[str, bytes] | None = None
    ) -> list[bytes]:
        """Return one image per page of ``source`` (``png`` or ``jpeg``)."""
        if self._check_format(format) == "pdf":
            raise InvalidDocumentError(self.instance, "images() takes format png or jpeg")
        return list(self.render(source, format=format, assets=assets).files)

    def ping(self) -> None:
        """Check the renderer is usable; the default has nothing to reach."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} instance={self.instance!r} adapter={self.adapter_name!r}>"

    # ------------------------------------------------------------------ primitives

    def _render_pdf(
        self, source: str, assets: dict[str, bytes], deadline: float
    ) -> tuple[bytes, int | None]:
        """Return ``(pdf, page_count)`` for ``source``, finishing before ``deadline``.

        ``deadline`` is on :func:`time.monotonic`. Raise :class:`DocumentTimeoutError`
        past it and :class:`DocumentTooLargeError` as soon as the output passes
        ``max_output_bytes``.
        """
        raise NotImplementedError

    # ------------------------------------------------------------------ helpers

    def _check_format(self, format: str) -> str:
        name = str(format or "").strip().lower()
        name = _FORMAT_ALIASES.get(name, name)
        if name not in FORMATS:
            raise InvalidDocumentError(
                self.instance, f"unknown format; use one of {', '.join(FORMATS)}"
            )
        return name

    def _check_assets(self, assets: Mapping[str, bytes] | None) -> dict[str, bytes]:
        """Return the assets as a dict, refusing unsafe names (the name is not echoed)."""
        if not assets:
            return {}
        if len(assets) > MAX_ASSETS:
            raise InvalidDocumentError(self.instance, f"more than {MAX_ASSETS} assets")
        checked: dict[str, bytes] = {}
        total = 0
        for name, data in assets.items():
            if (
                not isinstance(name, str)
                or len(name) > 255
                or not _ASSET_NAME.fullmatch(name)
                or ".." in name.split("/")
            ):
                raise InvalidDocumentError(
                    self.instance,
                    "an asset name must be a relative path of letters, digits, _ . - "
                    "(no absolute path, no .., no backslash)",
                )
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise InvalidDocumentError(self.instance, "an asset's content must be bytes")
            total += len(data)
            checked[name] = bytes(data)
        if total > self.max_output_bytes:
            raise DocumentTooLargeError(self.instance, "the assets together pass max_output_bytes")
        return checked

    def _check_size(self, size: int) -> None:
        if size > self.max_output_bytes:
            raise DocumentTooLargeError(self.instance, "the output passed max_output_bytes")

    def _timed_out(self, what: str) -> DocumentTimeoutError:
        return DocumentTimeoutError(
            self.instance, f"{what} did not finish within timeout ({self.timeout:g}s)"
        )

    def _left(self, deadline: float, what: str) -> float:
        """Return the seconds left before ``deadline``, or raise the timeout error."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._timed_out(what)
        return left


def check_endpoint(
    endpoint: str, *, allow_insecure: bool, allow_private: bool, instance: str = "default"
) -> str:
    """Return ``endpoint`` without a trailing ``/``, or raise ``InvalidOptionsError``."""
    if not (endpoint or "").strip():
        raise InvalidOptionsError(
            "document", "endpoint", "is required by the remote adapter", instance=instance
        )
    return check_url(
        endpoint,
        service="document",
        field="endpoint",
        instance=instance,
        allow_insecure=allow_insecure,
        allow_private=allow_private,
    ).rstrip("/")

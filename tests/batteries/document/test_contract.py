"""One contract, run on every document adapter with real renderers.

``local`` (WeasyPrint), ``remote`` (a Gotenberg-style service on 127.0.0.1) and ``latex``
(pdflatex in the bubblewrap sandbox) render the same two-page document; the PDF is read
back with poppler (page count, text), the page images are checked for their format,
count and pixel size, and the bounds give the documented errors.
"""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.support.batteries import assert_opened_as
from toolkit_batteries.document import (
    Document,
    DocumentTooLargeError,
    InvalidDocumentError,
    Rendered,
)

from .conftest import VARIANTS, Opened, pdf_pages, pdf_text, png_size

PAGES = ["Hello toolkit", "Second page here"]


class TestDocumentContract:
    def test_the_service_is_a_document(self, opened: Opened) -> None:
        assert_opened_as(opened.document, Document, opened.variant, opened.container, "document")

    def test_pdf_has_the_pages_and_the_text(self, opened: Opened) -> None:
        result = opened.document.render(opened.source(PAGES))
        assert isinstance(result, Rendered)
        assert (result.format, result.media_type) == ("pdf", "application/pdf")
        assert result.data.startswith(b"%PDF-")
        assert pdf_pages(result.data) == 2
        assert result.page_count in (2, None if opened.variant == "remote" else 2)
        text = pdf_text(result.data)
        assert "Hello toolkit" in text and "Second page here" in text
        assert text.index("Hello toolkit") < text.index("Second page here")
        assert result.size == len(result.data) > 500

    def test_pdf_shorthand(self, opened: Opened) -> None:
        pdf = opened.document.pdf(opened.source(["Only one"]))
        assert pdf_pages(pdf) == 1 and "Only one" in pdf_text(pdf)

    def test_png_pages_one_per_page_at_the_dpi(self, opened: Opened) -> None:
        result = opened.document.render(opened.source(PAGES), format="png")
        assert result.format == "png" and result.media_type == "image/png"
        assert len(result.files) == result.page_count == 2
        width, height = png_size(result.files[0])
        # A4 (8.27 in) or Letter (8.5 in) wide at the default 150 dpi.
        assert 1200 <= width <= 1300 and height > width

    def test_images_shorthand_and_jpeg_quality(self, make, opened: Opened) -> None:
        source = opened.source(["A page with some text to compress " * 20])
        low = make(opened.variant, quality=10, dpi=72).document.images(source, format="jpeg")
        high = make(opened.variant, quality=95, dpi=72).document.images(source, format="jpg")
        assert len(low) == len(high) == 1
        assert low[0][:3] == high[0][:3] == b"\xff\xd8\xff"
        assert len(low[0]) < len(high[0])

    def test_dpi_sets_the_pixel_size(self, make, opened: Opened) -> None:
        small = make(opened.variant, dpi=50).document.images(opened.source(["x"]))
        width, _ = png_size(small[0])
        assert 400 <= width <= 440

    def test_output_over_max_output_bytes_is_refused(self, make, opened: Opened) -> None:
        document = make(opened.variant, max_output_bytes=600).document
        with pytest.raises(DocumentTooLargeError) as caught:
            document.render(opened.source(PAGES))
        assert "max_output_bytes" in str(caught.value)
        assert f"document.{document.instance}" in str(caught.value)

    def test_page_images_over_max_output_bytes_are_refused(self, make, opened: Opened) -> None:
        document = make(opened.variant, max_output_bytes=60_000, dpi=300).document
        assert pdf_pages(document.pdf(opened.source(PAGES))) == 2  # the PDF fits
        with pytest.raises(DocumentTooLargeError) as caught:
            document.render(opened.source(PAGES), format="png")
        assert "rasterising" in str(caught.value) or "page images" in str(caught.value)

    @pytest.mark.parametrize("fmt", ["gif", "", "PDFX"])
    def test_unknown_format_is_refused(self, opened: Opened, fmt: str) -> None:
        with pytest.raises(InvalidDocumentError, match="unknown format"):
            opened.document.render(opened.source(PAGES), format=fmt)

    def test_images_refuses_pdf(self, opened: Opened) -> None:
        with pytest.raises(InvalidDocumentError):
            opened.document.images(opened.source(PAGES), format="pdf")

    def test_source_must_be_text(self, opened: Opened) -> None:
        with pytest.raises(InvalidDocumentError, match="must be"):
            opened.document.render(b"<p>bytes</p>")  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "name", ["/etc/passwd", "../up.png", "a/../../b", "back\\slash.png", "", ".hidden"]
    )
    def test_unsafe_asset_names_are_refused(self, opened: Opened, name: str) -> None:
        with pytest.raises(InvalidDocumentError, match="asset name") as caught:
            opened.document.render(opened.source(PAGES), assets={name: b"x"})
        assert name not in str(caught.value) or not name

    def test_render_template(self, opened: Opened, tmp_path) -> None:
        if opened.variant == "latex":
            template = (
                "{% autoescape off %}\\documentclass{article}\\begin{document}"
                "Dear {{ name }}\\newpage Total {{ total }}\\end{document}{% endautoescape %}"
            )
        else:
            template = (
                "<p style='page-break-after: always'>Dear {{ name }}</p><p>Total {{ total }}</p>"
            )
        (tmp_path / "invoice.txt").write_text(template)
        engine = {"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [tmp_path]}
        with override_settings(TEMPLATES=[engine]):
            result = opened.document.render_template(
                "invoice.txt", {"name": "Ada", "total": 42}, format="pdf"
            )
        assert pdf_pages(result.data) == 2
        text = pdf_text(result.data)
        assert "Dear Ada" in text and "Total 42" in text

    def test_repr_names_the_adapter(self, opened: Opened) -> None:
        assert repr(opened.document) == (
            f"<{type(opened.document).__name__} instance='default' adapter='{opened.variant}'>"
        )


def test_every_catalog_adapter_is_covered() -> None:
    from toolkit_batteries.document.adapters import ADAPTERS

    assert tuple(ADAPTERS) == VARIANTS

"""The ``remote`` adapter (``gotenberg``): HTML to PDF by a Gotenberg service over HTTP.

Wire format: the HTML route of Gotenberg's Chromium module, the common self-hosted
HTML-to-PDF service (any service answering the same request works):

* ``POST {endpoint}/forms/chromium/convert/html``, ``multipart/form-data`` with one
  ``files`` part named ``index.html`` (the HTML, UTF-8) and one ``files`` part per asset,
  named by its relative name (the HTML references it by that name);
* ``Authorization: Bearer <api_key>`` when ``api_key`` is set (for a gateway in front of
  the service), ``Accept: application/pdf``;
* the answer: ``200`` with the PDF as the body; anything else is an error (the status is
  reported, never the body);
* ``GET {endpoint}/health`` answers ``200`` when the service is up (:meth:`ping`).

``endpoint`` is https only unless ``allow_insecure``; its host must be public unless
``allow_private`` (checked on the literal host at open and on every resolved address
when connecting, by the provider base :mod:`toolkit_batteries.core.outbound.provider`;
redirects and environment proxies are not followed). Each allowance logs a warning at
open. The
answer is read in chunks and refused as soon as it passes ``max_output_bytes``; the
whole exchange is bounded by ``timeout``. Page images are made locally from the PDF
with ``pdftoppm``. The API key never appears in a repr, a log line or an error.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import (
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced

from ..base import Document, DocumentTooLargeError, RenderFailedError

with MissingExtraError.guard("document", "remote", "document", "httpx"):
    import httpx

__all__ = ["CONVERT_PATH", "HEALTH_PATH", "GotenbergDocument", "page_count"]

logger = logging.getLogger("toolkit.document")

#: The conversion route and the health route under ``endpoint``.
CONVERT_PATH = "/forms/chromium/convert/html"
HEALTH_PATH = "/health"
_COUNT = re.compile(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)")


def page_count(pdf: bytes) -> int | None:
    """Return the page count a PDF's root page tree declares, when it is readable."""
    counts = [int(m.group(1)) for m in _COUNT.finditer(pdf)]
    return max(counts) if counts else None


@traced("render", "ping")
class GotenbergDocument(Document):
    """HTML to PDF by a Gotenberg service (its Chromium HTML route)."""

    adapter_name = "remote"

    def __init__(self, options: Any, *, instance: str = "default") -> None:
        """Check the endpoint and build the provider base's client; nothing connects yet."""
        super().__init__(options, instance=instance)
        provider.required(
            options.endpoint,
            service="document",
            field="endpoint",
            adapter="remote",
            instance=instance,
        )
        self._endpoint = provider.endpoint(
            options, service="document", default="", instance=instance
        )
        self.endpoint = self._endpoint.url
        provider.warn_relaxed(logger, self._endpoint)
        headers = {"Accept": "application/pdf"}
        if options.api_key:
            headers["Authorization"] = f"Bearer {options.api_key}"
        self._client: Any = provider.httpx_client(
            self._endpoint, timeout=self.timeout, max_connections=8, headers=headers
        )

    @classmethod
    def open(cls, ctx: OpenContext) -> GotenbergDocument:
        return cls(ctx.options, instance=ctx.instance)

    def _render_pdf(
        self, source: str, assets: dict[str, bytes], deadline: float
    ) -> tuple[bytes, int | None]:
        files = [("files", ("index.html", source.encode("utf-8"), "text/html"))]
        files += [
            ("files", (name, data, "application/octet-stream")) for name, data in assets.items()
        ]
        left = self._left(deadline, "the rendering service")

        def too_large() -> DocumentTooLargeError:
            return DocumentTooLargeError(
                self.instance, "the rendering service's PDF passes max_output_bytes"
            )

        def in_time() -> None:
            if time.monotonic() > deadline:
                raise self._timed_out("the rendering service")

        try:
            with self._client.stream(
                "POST",
                self.endpoint + CONVERT_PATH,
                files=files,
                timeout=left,
            ) as response:
                if response.status_code != 200:
                    raise RenderFailedError(
                        self.instance, f"the rendering service answered {response.status_code}"
                    )
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > self.max_output_bytes:
                    raise too_large()
                pdf = provider.read_bounded(
                    response.iter_bytes(), self.max_output_bytes, too_large=too_large, each=in_time
                )
        except httpx.TimeoutException:
            raise self._timed_out("the rendering service") from None
        except (OutboundBlockedError, httpx.HTTPError) as exc:
            raise self._map(exc) from None
        if not pdf.startswith(b"%PDF-"):
            raise RenderFailedError(self.instance, "the rendering service did not answer a PDF")
        return pdf, page_count(pdf)

    def _map(self, exc: BaseException) -> Exception:
        failure = provider.failure_of(exc)
        if failure is not None and failure.kind is provider.Kind.BLOCKED:
            return provider.blocked_error(self._endpoint)
        return ServiceUnavailableError(
            "document",
            f"the rendering service is unreachable ({type(exc).__name__})",
            instance=self.instance,
        )

    def ping(self) -> None:
        """``GET {endpoint}/health``; raise ``ServiceUnavailableError`` unless it answers 200."""
        try:
            response = self._client.get(self.endpoint + HEALTH_PATH)
        except (OutboundBlockedError, httpx.HTTPError) as exc:
            raise self._map(exc) from None
        if response.status_code != 200:
            raise ServiceUnavailableError(
                "document",
                f"the rendering service's health check answered {response.status_code}",
                instance=self.instance,
            )

    def close(self) -> None:
        """Close the HTTP client."""
        client, self._client = self._client, ClosedResource("document", self.instance)
        if isinstance(client, httpx.Client):
            client.close()

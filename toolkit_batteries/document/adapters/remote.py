"""The ``remote`` adapter: HTML to PDF by a rendering service over HTTP.

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
when connecting, through :mod:`toolkit_batteries.core.outbound`; redirects and
environment proxies are not followed). Both allowances log a warning at open. The
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
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import OutboundBlockedError, is_blocked
from toolkit_batteries.core.tracing import traced

from ..base import Document, DocumentTooLargeError, RenderFailedError, check_endpoint

try:
    import httpx

    from toolkit_batteries.core.outbound.httpx_transport import GuardedTransport
except ImportError:  # pragma: no cover - httpx is part of the document extra
    raise MissingExtraError("document", "remote", "document", "httpx") from None

__all__ = ["CONVERT_PATH", "HEALTH_PATH", "RemoteDocument", "page_count"]

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
class RemoteDocument(Document):
    """HTML to PDF by a rendering service (Gotenberg's wire format)."""

    adapter_name = "remote"

    def __init__(self, options: Any, *, instance: str = "default") -> None:
        """Check the endpoint and build the guarded HTTP client; nothing connects yet."""
        super().__init__(options, instance=instance)
        allow_insecure = bool(options.allow_insecure)
        allow_private = bool(options.allow_private)
        self.endpoint = check_endpoint(
            options.endpoint,
            allow_insecure=allow_insecure,
            allow_private=allow_private,
            instance=instance,
        )
        if allow_insecure or allow_private:
            allowed = [("plain http", allow_insecure), ("private addresses", allow_private)]
            logger.warning(
                "document.%s: remote allows %s",
                instance,
                " and ".join(what for what, on in allowed if on),
            )
        self._headers = {"Accept": "application/pdf"}
        if options.api_key:
            self._headers["Authorization"] = f"Bearer {options.api_key}"
        self._client: Any = httpx.Client(
            transport=GuardedTransport(
                allow_private=allow_private, allow_insecure=allow_insecure, max_connections=8
            ),
            timeout=self.timeout,
            follow_redirects=False,
            trust_env=False,
        )

    @classmethod
    def open(cls, ctx: OpenContext) -> RemoteDocument:
        return cls(ctx.options, instance=ctx.instance)

    def _render_pdf(
        self, source: str, assets: dict[str, bytes], deadline: float
    ) -> tuple[bytes, int | None]:
        files = [("files", ("index.html", source.encode("utf-8"), "text/html"))]
        files += [
            ("files", (name, data, "application/octet-stream")) for name, data in assets.items()
        ]
        left = self._left(deadline, "the rendering service")
        chunks: list[bytes] = []
        size = 0
        try:
            with self._client.stream(
                "POST",
                self.endpoint + CONVERT_PATH,
                files=files,
                headers=self._headers,
                timeout=left,
            ) as response:
                if response.status_code != 200:
                    raise RenderFailedError(
                        self.instance, f"the rendering service answered {response.status_code}"
                    )
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > self.max_output_bytes:
                    raise DocumentTooLargeError(
                        self.instance, "the rendering service's PDF passes max_output_bytes"
                    )
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_output_bytes:
                        raise DocumentTooLargeError(
                            self.instance, "the rendering service's PDF passes max_output_bytes"
                        )
                    if time.monotonic() > deadline:
                        raise self._timed_out("the rendering service")
                    chunks.append(chunk)
        except httpx.TimeoutException:
            raise self._timed_out("the rendering service") from None
        except (OutboundBlockedError, httpx.HTTPError) as exc:
            raise self._map(exc) from None
        pdf = b"".join(chunks)
        if not pdf.startswith(b"%PDF-"):
            raise RenderFailedError(self.instance, "the rendering service did not answer a PDF")
        return pdf, page_count(pdf)

    def _map(self, exc: BaseException) -> Exception:
        if isinstance(exc, OutboundBlockedError) or is_blocked(exc):
            return InvalidOptionsError(
                "document",
                "endpoint",
                "resolves to a private, loopback or link-local address; set allow_private",
                instance=self.instance,
            )
        return ServiceUnavailableError(
            "document",
            f"the rendering service is unreachable ({type(exc).__name__})",
            instance=self.instance,
        )

    def ping(self) -> None:
        """``GET {endpoint}/health``; raise ``ServiceUnavailableError`` unless it answers 200."""
        try:
            response = self._client.get(self.endpoint + HEALTH_PATH, headers=self._headers)
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

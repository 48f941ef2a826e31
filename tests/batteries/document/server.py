"""A strict stand-in for Gotenberg's Chromium HTML route, on the shared provider-server base.

No rendering service runs on the machine, so the tests (and none of the benches) start
this one in a thread. It implements what the ``remote`` adapter sends, as Gotenberg
documents it, and refuses what Gotenberg refuses, with Gotenberg's ``text/plain`` error
bodies:

* ``POST /forms/chromium/convert/html``, ``multipart/form-data`` whose ``files`` parts
  hold ``index.html`` and the assets: answers ``200`` with ``application/pdf``, the PDF
  rendered from ``index.html`` by WeasyPrint (a real PDF, so page count and text can be
  checked);
* a body that is not ``multipart/form-data`` with a boundary, or without an
  ``index.html`` file: 400 ``Invalid form data: ...``; a form field of the route that is not
  of its type (``landscape``, ``printBackground``... not a boolean; ``scale`` outside 0.1 to
  2; a paper size or margin that is not a size): 400 naming the field; another method on
  the route: 405; another route: 404;
* ``GET /health``: ``200`` ``{"status": "up", "details": {...}}``.

Every request is recorded (:class:`Received`: method, path, lower-cased headers, ``files``
by file name) for assertions. ``status``, ``delay`` and ``body`` override the answer of a
well-formed request, to test errors, timeouts and oversized answers.
"""

from __future__ import annotations

import re
from typing import Any

from tests.support.provider_server import Answer, ProviderServer, Received

__all__ = ["Received", "RenderServer"]

CONVERT = "/forms/chromium/convert/html"
_BOOLEANS = frozenset(
    {
        "landscape",
        "printBackground",
        "omitBackground",
        "preferCssPageSize",
        "generateDocumentOutline",
        "singlePage",
        "failOnConsoleExceptions",
        "skipNetworkIdleEvent",
    }
)
_SIZES = frozenset(
    {"paperWidth", "paperHeight", "marginTop", "marginBottom", "marginLeft", "marginRight"}
)
_SIZE = re.compile(r"\d+(\.\d+)?(pt|px|in|mm|cm|pc)?")


def _plain(status: int, text: str) -> Answer:
    return status, text.encode(), {"Content-Type": "text/plain; charset=UTF-8"}  # type: ignore[return-value]


class RenderServer(ProviderServer):
    """Start with ``with RenderServer() as server:``; ``server.url`` is ``http://127.0.0.1:<port>``."""

    content_types = ()  # checked per route below (multipart only on the convert route)

    def __init__(self) -> None:
        super().__init__("")
        #: Status and body a well-formed conversion answers instead of the PDF.
        self.status = 200
        self.body: bytes | None = None

    def __enter__(self) -> RenderServer:
        self.start()
        return self

    def authorized(self, headers: dict[str, str]) -> bool:
        return True  # Gotenberg's own auth is off by default; a proxy in front may add one

    def malformed(self, request: Received) -> Answer | None:
        if request.path == "/health":
            return None if request.method == "GET" else _plain(405, "Method Not Allowed")
        if request.path != CONVERT:
            return _plain(404, "Not Found")
        if request.method != "POST":
            return _plain(405, "Method Not Allowed")
        if request.content_type != "multipart/form-data" or "boundary=" not in request.headers.get(
            "content-type", ""
        ):
            return _plain(400, "Invalid form data: request Content-Type isn't multipart/form-data")
        if "index.html" not in request.files:
            return _plain(400, "Invalid form data: form file 'index.html' is required")
        fields = {name: data.decode() for name, file, data in request.parts() if file is None}
        return self._fields(fields)

    @staticmethod
    def _fields(fields: dict[str, str]) -> Answer | None:
        for name, value in fields.items():
            if name in _BOOLEANS and value not in ("true", "false"):
                return _plain(400, f"Invalid form data: form field '{name}' is invalid (got "
                              f"'{value}', resulting to strconv.ParseBool: parsing '{value}': "
                              "invalid syntax)")  # fmt: skip
            if name in _SIZES and not _SIZE.fullmatch(value):
                return _plain(400, f"Invalid form data: form field '{name}' is invalid")
            if name == "scale":
                try:
                    scale = float(value)
                except ValueError:
                    scale = -1.0
                if not 0.1 <= scale <= 2.0:
                    return _plain(400, "Invalid form data: form field 'scale' is invalid")
        return None

    def answer(self, handler: Any, request: Received) -> None:
        if request.path == "/health":
            up = {"status": "up"}
            return handler.send_json(200, {"status": "up", "details": {"chromium": up}})
        if self.status != 200 or self.body is not None:
            kind = {"Content-Type": "application/pdf"}
            return handler.send_json(self.status, self.body or b"error", kind)
        import weasyprint

        pdf = weasyprint.HTML(string=request.files["index.html"].decode("utf-8")).write_pdf()
        return handler.send_json(200, pdf, {"Content-Type": "application/pdf"})

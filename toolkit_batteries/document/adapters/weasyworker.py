"""The renderer process of the ``local`` adapter: WeasyPrint behind a pipe.

WeasyPrint renders in the calling thread and cannot be interrupted, so the ``local``
adapter runs it here, in a child process it can kill when ``timeout`` passes (a crash or
a runaway layout then costs the child, never the web process). Started as
``python -m toolkit_batteries.document.adapters.weasyworker``, it imports WeasyPrint
once, answers ``{"ready": True}``, then serves one request at a time.

Wire format on stdin/stdout: frames of a 4-byte big-endian length and a pickled dict
(both ends are this module's code, started by the adapter; nothing else writes there).
A request is ``{"html", "assets", "max_bytes", "tmp_dir"}``; the answer is
``{"ok": True, "pdf", "pages", "refused"}`` or ``{"ok": False, "kind", "message"}``.

**Fetching.** WeasyPrint gets :class:`RefusingFetcher`: ``data:`` URLs, and ``file:``
URLs that resolve (symbolic links followed) inside the render's own asset directory, are
served; every other URL (http, https, ftp, any other file) is refused without any I/O and
counted in ``refused``. The document's relative URLs resolve against the asset directory.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import pickle
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit

__all__ = ["main", "read_frame", "write_frame"]

_HEADER = struct.Struct(">I")


def write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    """Write one frame to ``stream`` and flush it."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: BinaryIO) -> dict[str, Any] | None:
    """Read one frame from ``stream``; ``None`` at end of input."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (length,) = _HEADER.unpack(header)
    data = stream.read(length)
    if len(data) < length:
        return None
    return pickle.loads(data)


def _fetcher_class() -> type:
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    class RefusingFetcher(URLFetcher):
        """Serve ``data:`` URLs and files inside ``root``; refuse everything else."""

        def __init__(self, root: str | None) -> None:
            super().__init__(allowed_protocols=("data",), allow_redirects=False, timeout=1)
            self.root = root
            self.refused = 0

        def fetch(self, url: str, headers: Any = None) -> Any:
            scheme = url.split(":", 1)[0].lower()
            if scheme == "data":
                return super().fetch(url, headers)
            if scheme == "file" and self.root is not None:
                parts = urlsplit(url)
                if parts.netloc in ("", "localhost"):
                    path = os.path.realpath(unquote(parts.path))
                    if path.startswith(self.root + os.sep) and os.path.isfile(path):
                        body = Path(path).read_bytes()
                        kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
                        return URLFetcherResponse(url, body, {"Content-Type": kind})
            self.refused += 1
            raise ValueError("URL refused by the document battery (only data: and assets)")

    return RefusingFetcher


def _render(request: dict[str, Any], fetcher_class: type) -> dict[str, Any]:
    import weasyprint

    assets: dict[str, bytes] = request.get("assets") or {}
    max_bytes = int(request["max_bytes"])
    with tempfile.TemporaryDirectory(
        prefix="toolkit-document-", dir=request.get("tmp_dir")
    ) as work:
        root = os.path.realpath(work)
        for name, data in assets.items():
            target = Path(root, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        fetcher = fetcher_class(root)
        document = weasyprint.HTML(
            string=request["html"], base_url=root + os.sep, url_fetcher=fetcher
        ).render()
        pdf = document.write_pdf()
    if len(pdf) > max_bytes:
        return {"ok": False, "kind": "too_large", "message": "the PDF passed max_output_bytes"}
    return {"ok": True, "pdf": pdf, "pages": len(document.pages), "refused": fetcher.refused}


def main() -> None:
    """Serve render requests on stdin/stdout until stdin closes."""
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the frames
    logging.getLogger("weasyprint").addHandler(logging.NullHandler())
    logging.getLogger("weasyprint").propagate = False
    try:
        import weasyprint  # noqa: F401  (imported once, before "ready")
    except ImportError:
        write_frame(answers, {"ready": False, "message": "weasyprint is not installed"})
        return
    fetcher_class = _fetcher_class()
    write_frame(answers, {"ready": True})
    while True:
        request = read_frame(requests)
        if request is None:
            return
        try:
            answer = _render(request, fetcher_class)
        except Exception as exc:  # the error's kind only: its text may quote the document
            answer = {"ok": False, "kind": "error", "message": type(exc).__name__}
        write_frame(answers, answer)


if __name__ == "__main__":
    main()

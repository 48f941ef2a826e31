"""What only the ``local`` adapter has: its URL fetcher, its renderer processes, its timeout."""

from __future__ import annotations

import base64
import logging
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from toolkit_batteries.document import DocumentTimeoutError

from .conftest import html_source, pdf_pages, pdf_text

# A 2x2 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)


def image_count(pdf: bytes) -> int:
    """Return how many images poppler's ``pdfimages -list`` finds in ``pdf``."""
    with tempfile.NamedTemporaryFile(suffix=".pdf") as handle:
        handle.write(pdf)
        handle.flush()
        out = subprocess.run(
            ["pdfimages", "-list", handle.name], capture_output=True, text=True, check=True
        ).stdout
    return len(out.strip().splitlines()) - 2  # two header lines


class Recorder:
    """An HTTP server on 127.0.0.1 that records every request it receives."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                owner.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PNG)))
                self.end_headers()
                self.wfile.write(PNG)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def recorder():
    server = Recorder()
    yield server
    server.close()


def test_remote_urls_are_never_fetched(make, recorder, caplog) -> None:
    document = make("local").document
    html = (
        f'<link rel="stylesheet" href="{recorder.url}/style.css">'
        f'<p>Text</p><img src="{recorder.url}/image.png">'
        f'<img src="https://{recorder.url[7:]}/secure.png">'
        f"<style>@import url('{recorder.url}/imported.css');</style>"
    )
    with caplog.at_level(logging.WARNING, logger="toolkit.document"):
        pdf = document.pdf(html)
    assert recorder.paths == []
    assert image_count(pdf) == 0
    assert "Text" in pdf_text(pdf)
    assert any("refused 4 resource URL(s)" in r.getMessage() for r in caplog.records)
    assert all(recorder.url not in r.getMessage() for r in caplog.records)


def test_files_outside_the_assets_are_never_read(make, tmp_path) -> None:
    secret = tmp_path / "secret.html"
    secret.write_text("<p>TOP-SECRET-CONTENT</p>")
    (tmp_path / "pic.png").write_bytes(PNG)
    document = make("local").document
    html = (
        f'<p>Visible</p><iframe src="file://{secret}"></iframe>'
        f'<img src="file://{tmp_path}/pic.png"><img src="../pic.png">'
        f'<link rel="stylesheet" href="file:///etc/passwd">'
    )
    pdf = document.pdf(html, assets={"ok.txt": b"x"})
    assert "TOP-SECRET-CONTENT" not in pdf_text(pdf)
    assert image_count(pdf) == 0


def test_assets_and_data_urls_are_served(make) -> None:
    document = make("local").document
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    html = (
        '<link rel="stylesheet" href="css/page.css">'
        f'<img src="img/logo.png"><img src="{data_url}"><p class="x">Styled</p>'
    )
    pdf = document.pdf(
        html, assets={"img/logo.png": PNG, "css/page.css": b".x { font-size: 30pt }"}
    )
    assert image_count(pdf) == 2
    assert "Styled" in pdf_text(pdf)


def test_relative_urls_cannot_climb_out_of_the_assets(make) -> None:
    document = make("local").document
    pdf = document.pdf('<img src="../../../../../../etc/hostname"><p>ok</p>', assets={"a": PNG})
    assert image_count(pdf) == 0 and "ok" in pdf_text(pdf)


def test_timeout_kills_the_renderer_and_the_next_render_works(make) -> None:
    document = make("local", timeout="2s").document
    assert pdf_pages(document.pdf("<p>warm</p>")) == 1  # the process is up
    rows = "".join(f"<tr><td>{i}</td><td>cell {i}</td></tr>" for i in range(60_000))
    started = time.monotonic()
    with pytest.raises(DocumentTimeoutError) as caught:
        document.pdf(f"<table>{rows}</table>")
    assert time.monotonic() - started < 10
    assert "timeout" in str(caught.value) and "document.default" in str(caught.value)
    assert "cell" not in str(caught.value)
    assert pdf_pages(document.pdf("<p>after</p>")) == 1


def test_concurrent_renders(make) -> None:
    document = make("local").document
    results: dict[int, bytes] = {}
    errors: list[BaseException] = []

    def render(index: int) -> None:
        try:
            results[index] = document.pdf(html_source([f"Document number {index}"]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=render, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    assert all(f"Document number {i}" in pdf_text(results[i]) for i in range(6))


def test_closed_service_refuses_to_render(make) -> None:
    opened = make("local")
    opened.document.close()
    with pytest.raises(Exception, match="closed"):
        opened.document.pdf("<p>x</p>")


def test_weasyprint_stays_out_of_the_calling_process() -> None:
    """The render happens in a renderer process; the caller never imports WeasyPrint."""
    import os
    from pathlib import Path

    from tests.subprocesses import run_python_json

    code = (
        "import json, sys\n"
        "from toolkit_batteries.core.config import Config\n"
        "from toolkit_batteries.core.container import Container\n"
        "c = Container(Config.load({'document': {'adapter': 'local'}}, {}))\n"
        "pdf = c.document().pdf('<p>x</p>')\n"
        "c.close()\n"
        "print(json.dumps([pdf[:5].decode(), 'weasyprint' in sys.modules]))\n"
    )
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    assert run_python_json(code, cwd=root, env=env) == ["%PDF-", False]

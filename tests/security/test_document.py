"""Issue 23 defect 1: a LaTeX document cannot put a server file into the PDF it returns.

On the landed code ``\\immediate\\pdfobj stream file {/etc/passwd}`` passed the pre-scan
(pdfTeX does not apply ``openin_any=p`` to ``\\pdfobj file``), ``\\pdffiledump length 120
{/etc/passwd}`` was never path-checked, ``\\def\\x{/etc/passwd}\\input\\x`` hid the path
behind a macro, ``latex_sandbox=auto`` fell back silently to an unsandboxed render where
bubblewrap could not start, and the sandbox bound all of ``/usr`` (so an application under
``/usr/src/app`` was readable). Every render here is a real ``pdflatex`` run; the PDFs are
read back with poppler (``pdftotext``) and, for the streams poppler does not show as text,
inflated byte for byte.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.document import RenderFailedError, UnsafeSourceError
from toolkit_batteries.document import sandbox as sandbox_module
from toolkit_batteries.document.latexscan import scan

#: A readable file under /usr outside the TeX tree: what an app under /usr/src/app is.
SERVER_FILE = "/usr/lib/os-release"


def doc(body: str, preamble: str = "") -> str:
    return (
        f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    )


def server_file_marker() -> str:
    """Return a line of ``SERVER_FILE`` that would show if its content reached the PDF."""
    text = Path(SERVER_FILE).read_text()
    return next(line for line in text.splitlines() if line.startswith("PRETTY_NAME="))


def pdf_bytes_and_text(pdf: bytes) -> str:
    """Return what the PDF holds: poppler's text, the raw bytes and every inflated stream."""
    with tempfile.NamedTemporaryFile(suffix=".pdf") as handle:
        handle.write(pdf)
        handle.flush()
        text = subprocess.run(
            ["pdftotext", handle.name, "-"], capture_output=True, text=True, check=True, timeout=30
        ).stdout
    parts = [text, pdf.decode("latin-1")]
    for stream in re.finditer(rb"stream\r?\n(.*?)endstream", pdf, re.DOTALL):
        try:
            parts.append(zlib.decompress(stream.group(1)).decode("latin-1"))
        except zlib.error:
            parts.append(stream.group(1).decode("latin-1"))
    return "\n".join(parts)


@pytest.fixture
def latex() -> Iterator:
    """Return ``open(**options) -> document``; every container is closed afterwards."""
    containers: list[Container] = []

    def build(**options):
        container = Container(Config.load({"document": {"adapter": "latex", "options": options}}))
        containers.append(container)
        return container.document()

    yield build
    for container in containers:
        container.close()


#: pdfTeX's file primitives in every argument shape, and the ways to reach them or a
#: file command without spelling the path (or the primitive) where a scan would look.
ATTACKS = {
    "pdfobj stream file": doc("\\immediate\\pdfobj stream file {/etc/passwd}"),
    "pdfobj file, relative": doc("\\pdfobj file {../../../etc/passwd}\\pdfrefobj\\pdflastobj"),
    "pdfobj with attributes": doc("\\pdfobj stream attr {/X 1} file{/etc/passwd}"),
    "pdfobj, file keyword from a macro": doc("\\def\\k{file {/etc/passwd}}\\pdfobj stream \\k"),
    "pdfximage": doc("\\pdfximage{/usr/src/app/secret.pdf}\\pdfrefximage\\pdflastximage"),
    "pdfximage with dimensions": doc("\\pdfximage width 2cm page 1 {/srv/a.pdf}"),
    "pdffiledump with length": doc("\\pdffiledump length 120 {/etc/passwd}"),
    "pdffiledump offset": doc("\\pdffiledump offset 0 length 9{secret}"),
    "pdfmdfivesum file": doc("\\pdfmdfivesum file {/etc/passwd}"),
    "pdffilesize": doc("\\pdffilesize{/etc/passwd}"),
    "pdffilemoddate": doc("\\pdffilemoddate{/etc/passwd}"),
    "pdfmapfile": doc("\\pdfmapfile{/etc/passwd}"),
    "let alias of pdfobj": doc("\\let\\o\\pdfobj \\o stream file{/etc/passwd}"),
    "pdftexcmds wrapper": doc("\\makeatletter\\pdf@filedump{0}{99}{/etc/passwd}"),
    "luatex name": doc("\\filedump length 9 {/etc/passwd}"),
    "xetex picture": doc('\\XeTeXpicfile "/etc/passwd"'),
    "attachfile package": doc("\\attachfile{/etc/passwd}", "\\usepackage{attachfile}"),
    "embedfile package": doc("\\embedfile{x}", "\\usepackage{embedfile}"),
    "def then input a macro": doc("\\def\\x{/etc/passwd}\\input\\x"),
    "def then input in braces": doc("\\def\\x{/etc/passwd}\\input{\\x}"),
    "parameter as file name": doc("\\def\\f#1{\\input{#1}}\\f{/etc/passwd}"),
    "let alias of input": doc("\\let\\y\\input\\y{/etc/passwd}"),
    "expandafter into input": doc("\\def\\x{/etc/passwd}\\expandafter\\input\\x"),
    "csname": doc("\\csname pdfobj\\endcsname stream file{/etc/passwd}"),
    "expandafter csname": doc("\\expandafter\\let\\expandafter\\o\\csname pdfobj\\endcsname"),
    "nameuse": doc("\\makeatletter\\@nameuse{pdfobj} file{/etc/passwd}"),
    "UseName": doc("\\UseName{pdfobj} file{/etc/passwd}"),
    "csuse (etoolbox)": doc("\\csuse{pdfobj} file{/etc/passwd}", "\\usepackage{etoolbox}"),
    "expl3 syntax": doc("\\ExplSyntaxOn \\use:c {pdfobj} \\ExplSyntaxOff"),
    "string glues a name": doc("\\immediate\\write1{\\string\\pdfo bj}"),
    "carets through a write": doc("\\immediate\\write1{^\\empty^5cpdfobj}"),
    "escapechar": doc("\\escapechar=94 \\immediate\\write1{\\^ 5cpdfobj}"),
    "quoted absolute input": doc('\\input "/etc/passwd"'),
    "binary asset read as TeX": doc("\\input{logo.png}"),
}


@pytest.mark.parametrize("source", ATTACKS.values(), ids=ATTACKS.keys())
def test_file_primitives_and_indirection_are_refused_whatever_their_shape(source: str) -> None:
    with pytest.raises(UnsafeSourceError) as caught:
        scan(source)
    assert "/etc/passwd" not in str(caught.value)


def test_a_refused_document_never_reaches_the_compiler(latex) -> None:
    """Through the service: the attack fails before pdflatex runs; no PDF, no file content."""
    document = latex()
    marker = server_file_marker()
    for name in ("pdfobj stream file", "def then input a macro", "csname"):
        source = ATTACKS[name].replace("/etc/passwd", SERVER_FILE)
        with pytest.raises(UnsafeSourceError) as caught:
            document.pdf(source)
        assert marker not in str(caught.value) and SERVER_FILE not in str(caught.value)


def test_a_source_asset_is_scanned_like_the_source(latex) -> None:
    document = latex()
    with pytest.raises(UnsafeSourceError, match="file primitive"):
        document.pdf(
            doc("x", "\\usepackage{evil}"),
            assets={"evil.sty": b"\\immediate\\pdfobj stream file {/usr/lib/os-release}"},
        )


def test_ordinary_documents_still_render(latex) -> None:
    document = latex()
    pdf = document.pdf(
        doc(
            "\\section{Intro}\\label{s}See \\ref{s}, $x^2 + e^\\alpha$, "
            "\\includegraphics[width=1cm]{logo} and \\input{parts/chapter}.",
            "\\usepackage{graphicx}\\usepackage{hyperref}",
        ),
        assets={"parts/chapter.tex": b"From the chapter.", "logo.png": _png()},
    )
    assert "From the chapter." in pdf_bytes_and_text(pdf)


def test_the_sandbox_hides_server_files_even_with_the_prescan_off(latex, caplog) -> None:
    """The sandbox is the guard: with the pre-scan off, \\pdfobj finds no server file.

    The landed sandbox bound all of /usr, so the PDF embedded SERVER_FILE.
    """
    with caplog.at_level(logging.WARNING, logger="toolkit.document"):
        document = latex(latex_sandbox="required", latex_allow_unsafe_source=True)
    assert document.sandboxed
    marker = server_file_marker()
    source = doc(
        f"\\immediate\\pdfobj stream file {{{SERVER_FILE}}}\\pdfrefobj\\pdflastobj visible",
        "\\pdfcompresslevel=0",
    )
    try:
        pdf = document.pdf(source)
    except RenderFailedError as failed:
        assert "not found" in str(failed) and marker not in str(failed)
    else:
        assert "visible" in pdf_bytes_and_text(pdf)
        assert marker not in pdf_bytes_and_text(pdf)


def test_the_sandbox_binds_the_tex_tree_and_the_job_only(latex) -> None:
    document = latex(latex_sandbox="required")
    argv, _ = document._argv(Path("/tmp/job"))
    binds = [argv[i + 2] for i, word in enumerate(argv) if word.startswith("--ro-bind")]
    for broad in ("/", "/usr", "/usr/local", "/usr/src", "/usr/lib", "/usr/share", "/etc"):
        assert broad not in binds, broad
    assert "/usr/share/texlive" in binds and "/var/lib/texmf" in binds
    assert argv[argv.index("--bind") + 1 : argv.index("--bind") + 3] == ["/tmp/job", "/work"]


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path) -> None:
    """Leave a PATH with the TeX programs but no bubblewrap, and a fresh probe cache."""
    for program in ("pdflatex", "kpsewhich"):
        os.symlink(shutil.which(program), tmp_path / program)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sandbox_module, "_probed", {})


def test_the_sandbox_is_required_outside_development(no_bwrap, monkeypatch) -> None:
    """``latex_sandbox`` ``auto`` (the default) without a sandbox fails the open, loudly."""
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    with pytest.raises(InvalidOptionsError) as caught:
        Container(Config.load({"document": {"adapter": "latex"}})).document()
    message = str(caught.value)
    assert 'option "latex_sandbox"' in message and "outside development is required" in message
    assert "bubblewrap (bwrap) is not installed" in message


def test_development_may_render_unsandboxed_with_a_warning(no_bwrap, monkeypatch, caplog) -> None:
    monkeypatch.setenv("TOOLKIT_ENV", "development")
    with caplog.at_level(logging.WARNING, logger="toolkit.document"):
        container = Container(Config.load({"document": {"adapter": "latex"}}))
        document = container.document()
    try:
        assert not document.sandboxed
        assert any("unsandboxed" in r.getMessage() for r in caplog.records)
    finally:
        container.close()


def _png() -> bytes:
    """Return a 1x1 PNG."""
    import struct

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )

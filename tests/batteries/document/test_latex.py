"""What only the ``latex`` adapter has: the pre-scan, the sandbox, passes, compiler errors."""

from __future__ import annotations

import logging
import shutil

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.document import (
    DocumentTimeoutError,
    RenderFailedError,
    UnsafeSourceError,
    latex_escape,
)
from toolkit_batteries.document import sandbox as sandbox_module
from toolkit_batteries.document.latexscan import scan

from .conftest import latex_source, open_document, pdf_pages, pdf_text


def doc(body: str, preamble: str = "") -> str:
    return (
        f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    )


UNSAFE = [
    doc("\\immediate\\write18{touch /tmp/pwned}"),
    doc("\\write18{ls}"),
    doc("x", "\\usepackage{shellesc}"),
    doc("x", "\\usepackage[cache=false]{minted}"),
    doc("x", "\\usepackage{amsmath, pythontex}"),
    doc("\\directlua{os.execute('id')}"),
    doc("\\input{/etc/passwd}"),
    doc("\\input /etc/passwd "),
    doc("\\include{../secrets}"),
    doc("\\input{sub/../../x}"),
    doc("\\includegraphics[width=2cm]{/var/lib/x.png}", "\\usepackage{graphicx}"),
    doc("\\includegraphics{~/photo}", "\\usepackage{graphicx}"),
    doc("\\lstinputlisting{C:\\boot.ini}"),
    doc("\\immediate\\openout3=/tmp/out.tex"),
    doc("\\openin1=../../etc/hostname"),
    doc('\\input|"cat /etc/passwd"'),
    doc("\\catcode`\\@=0 @input{/etc/passwd}"),
    doc("\\csname input\\endcsname{/etc/passwd}"),
    doc("^^5cinput{/etc/passwd}"),
    doc("\\graphicspath{{/etc/}}", "\\usepackage{graphicx}"),
    doc("x", "\\usepackage{/tmp/evil}"),
]

SAFE = [
    doc("Plain text with 50\\% and a path-like word a/b and a URL-ish http://x/y."),
    doc("\\input{chapter}\\includegraphics{img/logo}", "\\usepackage{graphicx}"),
    doc("% \\write18{ls} in a comment is harmless\nText"),
    doc("\\section{Intro}\\label{s}See \\ref{s}", "\\usepackage{amsmath,graphicx}"),
]


@pytest.mark.parametrize("source", UNSAFE)
def test_the_prescan_refuses_unsafe_sources(source: str) -> None:
    with pytest.raises(UnsafeSourceError) as caught:
        scan(source)
    assert "document.default" in str(caught.value)
    assert "/etc/passwd" not in str(caught.value)


@pytest.mark.parametrize("source", SAFE)
def test_the_prescan_passes_ordinary_sources(source: str) -> None:
    scan(source)


def test_a_refused_source_never_runs(make, tmp_path) -> None:
    marker = tmp_path / "ran"
    document = make("latex").document
    with pytest.raises(UnsafeSourceError, match="shell escape"):
        document.pdf(doc(f"\\immediate\\write18{{touch {marker}}}"))
    assert not marker.exists()


def test_unsafe_source_allowed_still_cannot_escape(make, caplog) -> None:
    """With the pre-scan off, the engine's own rules still hold (openin_any=p, no shell)."""
    with caplog.at_level(logging.WARNING, logger="toolkit.document"):
        document = make("latex", latex_allow_unsafe_source=True).document
    assert any("pre-scan is off" in r.getMessage() for r in caplog.records)
    with pytest.raises(RenderFailedError) as caught:
        document.pdf(doc("\\input{/etc/hostname}"))
    assert "pdflatex failed" in str(caught.value)
    # write18 is a no-op without shell escape: the document renders, nothing ran.
    pdf = document.pdf(doc("before\\immediate\\write18{echo ran > ran.txt}after"))
    assert "before" in pdf_text(pdf)


def test_assets_are_readable_by_relative_name(make) -> None:
    document = make("latex").document
    pdf = document.pdf(
        doc("Main text. \\input{parts/chapter}"),
        assets={"parts/chapter.tex": b"Text from the chapter asset."},
    )
    assert "Text from the chapter asset." in pdf_text(pdf)


def test_cross_references_need_a_second_pass(make) -> None:
    source = doc("See page \\pageref{end}.\\newpage Last\\label{end}")
    one = make("latex", latex_runs=1).document.pdf(source)
    default = make("latex").document.pdf(source)
    assert "See page ??" in pdf_text(one)
    assert "See page 2" in pdf_text(default)


def test_a_compiler_error_is_reported_with_its_line(make) -> None:
    document = make("latex").document
    with pytest.raises(RenderFailedError) as caught:
        document.pdf(doc("\\undefinedmacro"))
    assert "Undefined control sequence" in str(caught.value)
    assert caught.value.detail.startswith("!")


def test_a_runaway_source_times_out(make) -> None:
    document = make("latex", timeout="3s").document
    with pytest.raises(DocumentTimeoutError, match="within timeout"):
        document.pdf(doc("\\def\\x{\\x}\\x"))
    # The next render works.
    assert pdf_pages(document.pdf(latex_source(["ok"]))) == 1


def test_runaway_output_is_stopped_at_max_output_bytes(make) -> None:
    document = make("latex", max_output_bytes="200KiB", timeout="20s").document
    with pytest.raises(Exception) as caught:
        document.pdf(
            doc("\\loop\\message{xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx}\\iftrue\\repeat")
        )
    assert "max_output_bytes" in str(caught.value)


def test_sandbox_required_runs_under_bwrap(make) -> None:
    document = make("latex", latex_sandbox="required").document
    assert document.sandboxed
    argv, env = document._argv(__import__("pathlib").Path("/tmp/x"))
    assert argv[0].endswith("bwrap") and "--unshare-all" in argv and env is None
    assert "-no-shell-escape" in argv and "-halt-on-error" in argv
    assert pdf_pages(document.pdf(latex_source(["a", "b"]))) == 2


def test_sandbox_required_fails_clearly_without_bwrap(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent:" + "/".join(shutil.which("pdflatex").split("/")[:-1]))
    monkeypatch.setattr(sandbox_module, "_probed", {})
    tex_dir = shutil.which("pdflatex").rsplit("/", 1)[0]
    if shutil.which("bwrap", path=tex_dir):
        # bwrap sits beside pdflatex (/usr/bin): point PATH at a directory with only pdflatex.
        import os
        import tempfile

        only = tempfile.mkdtemp()
        os.symlink(shutil.which("pdflatex"), os.path.join(only, "pdflatex"))
        os.symlink(shutil.which("kpsewhich"), os.path.join(only, "kpsewhich"))
        monkeypatch.setenv("PATH", only)
    with pytest.raises(InvalidOptionsError) as caught:
        open_document({"adapter": "latex", "options": {"latex_sandbox": "required"}})
    assert 'option "latex_sandbox" is required but bubblewrap (bwrap) is not installed' in str(
        caught.value
    )


def test_sandbox_auto_without_bwrap_runs_unsandboxed_in_development_with_a_warning(
    monkeypatch, tmp_path, caplog
) -> None:
    monkeypatch.setenv("TOOLKIT_ENV", "development")
    monkeypatch.setattr(sandbox_module, "_probed", {"bwrap": "bwrap is not installed"})
    with caplog.at_level(logging.WARNING, logger="toolkit.document"):
        container, document = open_document({"adapter": "latex"})
    try:
        assert not document.sandboxed
        assert any("unsandboxed" in r.getMessage() for r in caplog.records)
        _, env = document._argv(tmp_path)
        assert env is not None and env["openin_any"] == env["openout_any"] == "p"
        assert pdf_pages(document.pdf(latex_source(["x"]))) == 1
    finally:
        container.close()


def test_sandbox_off_and_auto_with_bwrap() -> None:
    container, off = open_document({"adapter": "latex", "options": {"latex_sandbox": "off"}})
    container2, auto = open_document({"adapter": "tex"})
    try:
        assert not off.sandboxed and auto.sandboxed and auto.adapter_name == "latex"
    finally:
        container.close()
        container2.close()


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"latex_command": "no-such-latex"}, "latex_command"),
        ({"latex_runs": 11}, "latex_runs"),
        ({"dpi": 5000}, "dpi"),
    ],
)
def test_bad_options_fail_the_open(options: dict, field: str) -> None:
    with pytest.raises(InvalidOptionsError, match=f'option "{field}"'):
        open_document({"adapter": "latex", "options": options})


def test_a_missing_converter_is_named(make) -> None:
    document = make("latex", latex_pdf_to_ppm="no-such-pdftoppm").document
    assert pdf_pages(document.pdf(latex_source(["x"]))) == 1
    with pytest.raises(InvalidOptionsError, match='option "latex_pdf_to_ppm"'):
        document.images(latex_source(["x"]))


def test_latex_escape_makes_values_literal(make) -> None:
    value = "50% off & {braces} $5 #1 a_b ~ ^ \\"
    escaped = latex_escape(value)
    scan(doc(escaped))
    text = pdf_text(make("latex").document.pdf(doc(escaped)))
    assert "50% off & {braces} $5 #1 a" in text

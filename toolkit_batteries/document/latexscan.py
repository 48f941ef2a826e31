"""The LaTeX source pre-scan, and escaping text for LaTeX templates.

:func:`scan` refuses, with a reason naming the construct (never the source text):

* shell escape: ``\\write18``, ``\\ShellEscape``, the packages that need it (``shellesc``,
  ``minted``, ``pythontex``, ...), and embedded Lua (``\\directlua``, ``luacode``);
* a file argument that is absolute (``/etc/passwd``, ``~/x``, ``C:\\x``) or climbs
  (``..``) in the commands that read or write files (``\\input``, ``\\include``,
  ``\\includegraphics``, ``\\openin``, ``\\openout``, ``\\usepackage``, ...);
* the primitives that hide a command from a textual scan: ``\\catcode``, ``\\csname``,
  ``\\scantokens`` and ``^^`` character codes.

It is a first line only. The adapter also runs the compiler with ``-no-shell-escape``,
kpathsea's ``openin_any=p`` / ``openout_any=p`` (no absolute or ``..`` paths, whatever
the source builds at run time) and, with ``latex_sandbox``, inside a bubblewrap sandbox
without network that sees only the TeX installation and the render's directory.
"""

from __future__ import annotations

import re

from .base import UnsafeSourceError

__all__ = ["FILE_COMMANDS", "latex_escape", "scan"]

#: Commands whose arguments name files (read or written).
FILE_COMMANDS = (
    "input",
    "include",
    "includeonly",
    "InputIfFileExists",
    "IfFileExists",
    "includegraphics",
    "includepdf",
    "includesvg",
    "graphicspath",
    "lstinputlisting",
    "verbatiminput",
    "VerbatimInput",
    "inputminted",
    "openin",
    "openout",
    "bibliography",
    "addbibresource",
    "bibliographystyle",
    "usepackage",
    "RequirePackage",
    "documentclass",
    "LoadClass",
    "import",
    "subimport",
    "subfile",
    "pdffiledump",
    "pdfmdfivesum",
    "pdffilesize",
    "pdffilemoddate",
)
#: Packages that run programs through shell escape (or embed another language).
SHELL_PACKAGES = frozenset(
    {
        "shellesc",
        "minted",
        "pythontex",
        "gnuplottex",
        "sagetex",
        "bashful",
        "write18",
        "luacode",
        "auto-pst-pdf",
        "pst-pdf",
        "epstopdf",
        "svg",
    }
)
_SHELL = re.compile(
    r"\\(?:immediate\s*)?write\s*18|\\ShellEscape|\\shellescape|shell-escape"
    r"|\\directlua|\\luaexec|\\luadirect|\\latelua|\\begin\s*\{\s*luacode"
    r"|\\pdfshellescape|\\systemcall",
)
_HIDING = re.compile(r"\\catcode|\\csname|\\scantokens|\\lccode|\\uccode|\^\^")
_COMMENT = re.compile(r"(?<!\\)%[^\n]*")
_FILE_COMMAND = re.compile(
    r"\\@{0,2}(" + "|".join(FILE_COMMANDS) + r")(?![A-Za-z])\*?"
    r"\s*(?:\[[^\]]*\]\s*)*"  # optional arguments
    r"(\{(?:[^{}]|\{[^{}]*\})*\}(?:\s*\{(?:[^{}]|\{[^{}]*\})*\})?|[^{\\\n]+)?"
)
_PACKAGES = re.compile(r"\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]*\]\s*)?\{([^}]*)\}")


def _unsafe_path(argument: str) -> bool:
    """Whether a file argument is absolute, home-relative or climbs out with ``..``."""
    for part in re.split(r"[{},=\s]+", argument):
        if not part:
            continue
        if part.startswith(("/", "~", "\\")) or re.match(r"[A-Za-z]:[\\/]", part):
            return True
        if ".." in re.split(r"[\\/]", part):
            return True
        if part.startswith("|"):  # \input|"command": a pipe through shell escape
            return True
    return False


def scan(source: str, instance: str = "default") -> None:
    """Raise :class:`UnsafeSourceError` if ``source`` uses a refused construct."""
    text = _COMMENT.sub("", source)
    if _SHELL.search(text):
        raise UnsafeSourceError(
            instance, "the LaTeX source uses shell escape or embedded Lua (\\write18 and kin)"
        )
    if _HIDING.search(text):
        raise UnsafeSourceError(
            instance,
            "the LaTeX source uses \\catcode, \\csname, \\scantokens or ^^ character codes, "
            "which can hide commands from the pre-scan",
        )
    for match in _PACKAGES.finditer(text):
        names = {name.strip() for name in match.group(1).split(",")}
        if names & SHELL_PACKAGES:
            raise UnsafeSourceError(
                instance, "the LaTeX source loads a package that needs shell escape"
            )
    for match in _FILE_COMMAND.finditer(text):
        argument = match.group(2) or ""
        if _unsafe_path(argument):
            raise UnsafeSourceError(
                instance,
                f"\\{match.group(1)} names an absolute path or a path with .. "
                "(files must be assets, by relative name)",
            )


_ESCAPES = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
}
_SPECIAL = re.compile(r"[\\{}$&#%_^~]")


def latex_escape(text: object) -> str:
    """Return ``text`` with LaTeX's special characters escaped, for template values."""
    return _SPECIAL.sub(lambda m: _ESCAPES[m.group(0)], str(text))

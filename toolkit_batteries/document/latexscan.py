"""The LaTeX source pre-scan, and escaping text for LaTeX templates.

:func:`scan` reads the source as TeX's tokenizer would (control sequences, with ``@``,
``:`` and ``_`` counted as letters too, since ``\\makeatletter`` and expl3 make them so)
and refuses, with a reason naming the construct (never the source text):

* shell escape: ``\\write18``, ``\\ShellEscape``, the packages that need it (``shellesc``,
  ``minted``, ``pythontex``, ...), and embedded Lua (``\\directlua``, ``luacode``);
* the engine's file primitives, whatever their arguments (kpathsea's ``openin_any=p``
  does not guard ``\\pdfobj ... file`` at all): ``\\pdfobj`` (``stream file``),
  ``\\pdfximage``, ``\\pdffiledump``,
  ``\\pdfmdfivesum``, ``\\pdffilesize``, ``\\pdffilemoddate``, ``\\pdfmapfile``, their
  LuaTeX/XeTeX and package wrappers (``\\pdf@filedump``, ``\\XeTeXpicfile``,
  ``\\saveimageresource``, ``\\attachfile``, ``\\embedfile``, ...) and the packages that
  embed files (``attachfile``, ``embedfile``, ``media9``, ...);
* the primitives that build a control sequence from characters, so hide one from any
  textual scan: ``\\csname`` (and ``\\@nameuse``, ``\\UseName``, ``\\csuse``, ...),
  ``\\catcode``, ``\\scantokens``, ``\\string``, ``\\ExplSyntaxOn``, ``^^`` character codes
  (and ``^`` + macros + ``^``, which becomes ``^^`` when written to a file and read back);
* a file command (``\\input``, ``\\include``, ``\\includegraphics``, ``\\openin``,
  ``\\openout``, ``\\usepackage``, ...) whose argument is not literal text (a macro, a
  parameter: ``\\def\\x{/etc/passwd}\\input\\x``), or is absolute (``/etc/passwd``,
  ``~/x``, ``C:\\x``) or climbs (``..``).

It is a first line only: TeX is a programming language and no scan of its text can be
complete. The adapter also runs the compiler with ``-no-shell-escape``, kpathsea's
``openin_any=p`` / ``openout_any=p`` and, unless ``latex_sandbox`` is ``off``, inside a
bubblewrap sandbox without network that sees only the TeX installation and the render's
directory (:mod:`.sandbox`): that sandbox is the guard.
"""

from __future__ import annotations

import re

from .base import UnsafeSourceError

__all__ = ["FILE_COMMANDS", "latex_escape", "scan", "scan_assets"]

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
#: Packages that embed or read arbitrary files into the PDF outside kpathsea's rules.
FILE_EMBEDDING_PACKAGES = frozenset(
    {"attachfile", "attachfile2", "embedfile", "media9", "movie15", "navigator", "catchfile"}
)
#: Control sequences refused wherever they appear (as a command, a ``\let`` target, an
#: argument): the engine's file primitives and their wrappers. Matched against every
#: reading of a name (standard catcodes, ``@`` a letter, expl3's ``:``/``_`` letters).
FILE_PRIMITIVES = frozenset(
    {
        "pdfobj",
        "pdfximage",
        "pdffiledump",
        "pdfmdfivesum",
        "pdffilesize",
        "pdffilemoddate",
        "pdfmapfile",
        "pdfmapline",
        "filedump",
        "mdfivesum",
        "filesize",
        "filemoddate",
        "XeTeXpicfile",
        "XeTeXpdffile",
        "saveimageresource",
        "pdfextension",
        "pdffeedback",
    }
)
#: Substrings of a name (any reading) that mark a file primitive's wrapper:
#: ``\pdf@filedump`` (pdftexcmds), ``\file_get:nnN`` (expl3), ``\attachfile``, ...
_FILE_PRIMITIVE_PART = re.compile(
    r"filedump|mdfivesum|filesize|filemoddate|ximage|pdfobj|picfile|pdffile|imageresource"
    r"|mapfile|mapline|attachfile|embedfile|embeddedfile|includemedia|^file_",
    re.IGNORECASE,
)
#: Control sequences that make a control sequence out of characters (or change how
#: characters are read), so could name any primitive without spelling it.
INDIRECTION = frozenset(
    {
        "csname",
        "ifcsname",
        "begincsname",
        "lastnamedcs",
        "scantokens",
        "scantextokens",
        "catcode",
        "lccode",
        "uccode",
        "string",
        "pdfprimitive",
        "primitive",
        "nameuse",
        "namedef",
        "@nameuse",
        "@namedef",
        "UseName",
        "ExpandArgs",
        "csuse",
        "csdef",
        "csgdef",
        "csedef",
        "csxdef",
        "cslet",
        "csletcs",
        "letcs",
        "ExplSyntaxOn",
        "@backslashchar",
        "escapechar",
        "everyeof",
    }
)
_SHELL = re.compile(
    r"\\(?:immediate\s*)?write\s*18|\\ShellEscape|\\shellescape|shell-escape"
    r"|\\directlua|\\luaexec|\\luadirect|\\latelua|\\begin\s*\{\s*luacode"
    r"|\\pdfshellescape|\\systemcall",
)
#: ``^^`` character codes, and ``^`` + only macros, braces or spaces + ``^`` (the macros
#: expand to nothing in a ``\write``, so the file read back holds ``^^``).
_CARETS = re.compile(r"\^\^|\^\s*\\[A-Za-z@:_]+(?:\s|\\[A-Za-z@:_]+|\\.|\{[^{}]*\})*\^")
_COMMENT = re.compile(r"(?<!\\)%[^\n]*")
#: A control word under the widest catcodes (``@``, ``:`` and ``_`` as letters).
_CONTROL_WORD = re.compile(r"\\([A-Za-z@:_]+)")
_FILE_COMMAND = re.compile(
    r"\\@{0,2}(" + "|".join(FILE_COMMANDS) + r")(?![A-Za-z@])\*?"
    r"\s*(?:\[[^\]]*\]\s*)*"  # optional arguments
    r"(\{(?:[^{}]|\{[^{}]*\})*\}(?:\s*\{(?:[^{}]|\{[^{}]*\})*\})?|[^\s{}\\%]+)?"
)
_PACKAGES = re.compile(r"\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]*\]\s*)?\{([^}]*)\}")
#: What a literal file argument may hold besides braces: no macro, parameter or catcode
#: trick can hide in it.
_LITERAL_ARGUMENT = re.compile(r"[^\\#^~$&]*")
#: Extensions of assets that TeX can read as source (``\input``, ``\usepackage``, ...),
#: so are scanned like the source itself.
SOURCE_EXTENSIONS = frozenset(
    {"", ".tex", ".sty", ".cls", ".def", ".cfg", ".clo", ".ldf", ".fd", ".ltx", ".bbl"}
    | {".dtx", ".ins", ".aux", ".toc", ".lof", ".lot", ".idx", ".ind", ".txt", ".bib"}
)


def _readings(name: str) -> set[str]:
    """Return every name TeX could read from a control word under some catcode regime."""
    names = {name}
    for letters in (r"[A-Za-z]+", r"[A-Za-z@]+", r"[A-Za-z:_]+"):
        match = re.match(letters, name)
        if match:
            names.add(match.group(0))
    return names


#: Commands that read their file as TeX source: an asset they name must be one
#: :func:`scan_assets` scanned.
INPUT_COMMANDS = frozenset(
    {"input", "include", "InputIfFileExists", "openin", "import", "subimport", "subfile"}
)


def _extension(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return "." + base.rsplit(".", 1)[1].lower() if "." in base else ""


def _unsafe_path(argument: str) -> bool:
    """Whether a file argument is absolute, home-relative or climbs out with ``..``."""
    for part in re.split(r"[{},=\s]+", argument.replace('"', "")):
        if not part:
            continue
        if part.startswith(("/", "~", "\\")) or re.match(r"[A-Za-z]:[\\/]", part):
            return True
        if ".." in re.split(r"[\\/]", part):
            return True
        if part.startswith("|"):  # \input|"command": a pipe through shell escape
            return True
    return False


def _refuse(instance: str, reason: str) -> UnsafeSourceError:
    return UnsafeSourceError(instance, reason)


def scan(source: str, instance: str = "default") -> None:
    """Raise :class:`UnsafeSourceError` if ``source`` uses a refused construct."""
    text = _COMMENT.sub("", source)
    if _SHELL.search(text):
        raise _refuse(
            instance, "the LaTeX source uses shell escape or embedded Lua (\\write18 and kin)"
        )
    if _CARETS.search(text):
        raise _refuse(
            instance,
            "the LaTeX source uses ^^ character codes (or ^ and macros that write them), "
            "which can hide commands from the pre-scan",
        )
    for match in _CONTROL_WORD.finditer(text):
        readings = _readings(match.group(1))
        if readings & INDIRECTION:
            hit = sorted(readings & INDIRECTION)[0]
            raise _refuse(
                instance,
                f"the LaTeX source uses \\{hit}, which can build or hide a command "
                "from the pre-scan (\\csname, \\catcode, \\string, \\scantokens and kin)",
            )
        if readings & FILE_PRIMITIVES or any(_FILE_PRIMITIVE_PART.search(n) for n in readings):
            raise _refuse(
                instance,
                "the LaTeX source uses a file primitive of the engine (\\pdfobj, "
                "\\pdfximage, \\pdffiledump and kin), refused whatever its argument",
            )
    for match in _PACKAGES.finditer(text):
        names = {name.strip() for name in match.group(1).split(",")}
        if names & SHELL_PACKAGES:
            raise _refuse(instance, "the LaTeX source loads a package that needs shell escape")
        if names & FILE_EMBEDDING_PACKAGES:
            raise _refuse(instance, "the LaTeX source loads a package that embeds arbitrary files")
    for match in _FILE_COMMAND.finditer(text):
        command, argument = match.group(1), match.group(2) or ""
        if not argument.strip() or not _LITERAL_ARGUMENT.fullmatch(argument):
            raise _refuse(
                instance,
                f"\\{command} takes its file name from a macro or parameter "
                "(file names must be literal text)",
            )
        if _unsafe_path(argument):
            raise _refuse(
                instance,
                f"\\{command} names an absolute path or a path with .. "
                "(files must be assets, by relative name)",
            )
        parts = [p for p in re.split(r"[{},=\s]+", argument.replace('"', "")) if p]
        if command in INPUT_COMMANDS and any(_extension(p) not in SOURCE_EXTENSIONS for p in parts):
            raise _refuse(
                instance,
                f"\\{command} reads a file that is not TeX source as TeX (name a .tex asset)",
            )


def scan_assets(assets: dict[str, bytes], instance: str = "default") -> None:
    """Scan every asset TeX could read as source (``.tex``, ``.sty``, ...) like the source."""
    for name, data in assets.items():
        if _extension(name) in SOURCE_EXTENSIONS:
            scan(data.decode("latin-1"), instance)


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

"""Parse schema text into :mod:`toolkit_codegen.nodes`, reporting every syntax error at once.

The pipeline for one file is three passes, one module each; this module runs them, and
finds the words to put in a diagnostic when a chunk fails to parse:

1. :mod:`.scanning`: a regular-expression *scan* (the lexer's job) finds comments (kept
   in a side channel for doc comments and the formatter), unterminated strings and
   illegal characters, and cuts the text into top-level *chunks*, one per declaration.
2. :mod:`.syntax`: the pyparsing grammar parses each chunk on its own. A chunk that fails
   yields one diagnostic and the next chunk is parsed anyway, so every broken declaration
   is reported in one run (recovery per declaration, as the original compiler does).
3. :mod:`.building`: a builder turns the parse results into frozen nodes with 1-based
   positions (columns in UTF-16 code units, so they match LSP editors) and checks the
   shape of attributes, which the nodes cannot represent when wrong.

The grammar has no recursive rule, so no input can exhaust the stack; the scan and the
parser never raise on any text.
"""

from __future__ import annotations

import re
from typing import Any

from .building import Builder, ParsedFile
from .nodes import (
    Diagnostic,
    SourceFile,
)
from .scanning import (
    DECLARATION_KEYWORDS,
    RESERVED_WORDS,
    TOKEN,
    Comment,
    Locator,
    Scan,
    diagnostic_key,
    did_you_mean,
    scan_text,
    sort_diagnostics,
    suggest,
    unescape,
)
from .syntax import IDENTIFIER, declaration_grammar

__all__ = [
    "DECLARATION_KEYWORDS",
    "RESERVED_WORDS",
    "Comment",
    "ParsedFile",
    "diagnostic_key",
    "parse_file",
    "sort_diagnostics",
    "suggest",
    "unescape",
]


# Possessive quantifiers (``++``, ``*+``): whitespace runs must never be re-split on
# backtracking, or a long run of blanks before a stray character takes exponential time.
_BLANK = re.compile(r"(?:[ \t\r\n]++|//[^\n]*+)*+")


def _found(text: str, at: int) -> tuple[int, str]:
    """Return the offset of the next token at or after ``at`` and a description of it."""
    at = _BLANK.match(text, at).end()  # type: ignore[union-attr]
    if at >= len(text):
        return at, "end of file"
    m = TOKEN.match(text, at)
    assert m is not None
    if m.lastgroup == "string":
        return at, "a string"
    token = m.group()
    return at, f"'{token}'" if token.isprintable() else repr(token)


def _unclosed(chunk: str) -> int | None:
    """Return the chunk offset of the innermost ``{`` that is never closed, if any."""
    stack: list[int] = []
    for m in TOKEN.finditer(chunk):
        if m.lastgroup == "punct":
            if m.group() == "{":
                stack.append(m.start())
            elif m.group() == "}" and stack:
                stack.pop()
    return stack[-1] if stack else None


_DECL_NAME = re.compile(rf"(?m)^[ \t]*(?:{'|'.join(DECLARATION_KEYWORDS)})[ \t]+({IDENTIFIER})")
_EMPTY = re.compile(r"(?:[ \t\r\n]++|//[^\n]*+)*+\Z")


def parse_file(text: str, path: str) -> ParsedFile:
    """Parse one file's text; never raises, reports every broken declaration."""
    if text.startswith("\ufeff"):
        text = text[1:]
    loc = Locator(text, path)
    scan = scan_text(text, loc)
    out = ParsedFile(path, text, SourceFile(path), list(scan.diagnostics), scan.comments)
    builder = Builder(loc, scan.comments, out)
    code = _blank_comments(text, scan.comment_spans)
    top, parse_error = declaration_grammar()
    for begin, end, _first in scan.chunks:
        chunk = code[begin:end]
        if _EMPTY.match(chunk):
            continue
        try:
            results = top.parse_string(chunk, parse_all=True)
        except parse_error as exc:
            out.diagnostics.extend(_syntax_error(text, chunk, begin, end, exc, loc, scan))
            out.broken_names.update(m.group(1) for m in _DECL_NAME.finditer(chunk))
            continue
        builder.offset = begin
        for raw in results:
            builder.declaration(raw)
    out.source = SourceFile(
        path,
        tuple(builder.entities),
        tuple(builder.messages),
        tuple(builder.enums),
        tuple(builder.services),
        tuple(builder.jobs),
        tuple(builder.schedules),
        tuple(builder.sagas),
    )
    out.diagnostics = sort_diagnostics(out.diagnostics)
    return out


def _blank_comments(text: str, spans: list[tuple[int, int]]) -> str:
    """Return ``text`` with every comment replaced by spaces (offsets unchanged)."""
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(" " * (end - start))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _syntax_error(
    text: str, chunk: str, begin: int, end: int, exc: Any, loc: Locator, scan: Scan
) -> list[Diagnostic]:
    at, found = _found(text, begin + exc.loc)
    if any(begin <= offset <= at for offset in scan.lex_error_offsets):
        return []  # the lexical error in this declaration explains the syntax error
    expected = str(exc.msg)
    expected = expected[:1].lower() + expected[1:]
    if at >= end and "'}'" in expected:
        brace = _unclosed(chunk)
        if brace is not None:
            return [
                Diagnostic(
                    loc.pos(begin + brace), "parse", "unbalanced braces: this '{' is never closed"
                )
            ]
    if expected == "expected end of text":
        expected = "expected a declaration (entity, message, enum, service, job, schedule or saga)"
    if found == "'}'" and expected.startswith("expected a declaration"):
        return [Diagnostic(loc.pos(at), "parse", "unbalanced braces: unexpected '}'")]
    hint = ""
    if expected.startswith("expected a declaration") and found.startswith("'"):
        hint = did_you_mean(found.strip("'"), DECLARATION_KEYWORDS)
    elif found.strip("'") in RESERVED_WORDS:
        hint = f" ({found} is a reserved word and cannot be a name)"
    return [Diagnostic(loc.pos(at), "parse", f"{expected}, found {found}{hint}")]

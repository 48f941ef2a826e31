"""The first pass over schema text: the language's words, positions, and the scan.

The scan is the lexer's job done with regular expressions: it finds comments (kept in a
side channel for doc comments and the formatter), unterminated strings and illegal
characters, and cuts the text into top-level *chunks*, one per declaration, which
:mod:`.syntax` then parses one by one. :class:`Locator` turns offsets into 1-based
positions with columns in UTF-16 code units, so they match LSP editors. It never raises
on any text.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .escaping import control_characters
from .nodes import (
    Diagnostic,
    Position,
)

__all__ = [
    "ATTRIBUTE_PLACES",
    "BACKGROUND_OPTIONS",
    "DECLARATION_KEYWORDS",
    "RELATION_KINDS",
    "RESERVED_WORDS",
    "RPC_OPTIONS",
    "TOKEN",
    "VALIDATE_RULES",
    "Comment",
    "Locator",
    "Scan",
    "diagnostic_key",
    "did_you_mean",
    "scan_text",
    "sort_diagnostics",
    "suggest",
    "unescape",
]

#: Words that can never name a declaration, field or parameter (the original's 14).
RESERVED_WORDS: frozenset[str] = frozenset(
    (
        *("entity", "service", "job", "schedule", "rpc", "index", "enum", "message"),
        *("has_many", "has_one", "belongs_to", "many_to_many", "true", "false"),
    )
)
#: Words that start a top-level declaration.
DECLARATION_KEYWORDS: tuple[str, ...] = (
    *("entity", "message", "enum", "service", "job", "schedule", "saga"),
)
RELATION_KINDS: tuple[str, ...] = ("belongs_to", "has_many", "has_one", "many_to_many")
RPC_OPTIONS: tuple[str, ...] = ("http", "auth", "permission", "paginated", "errors")
#: The options of the blocks of ``job``, ``schedule`` and a saga's ``step``.
BACKGROUND_OPTIONS: dict[str, tuple[str, ...]] = {
    "job": ("queue", "retry"),
    "schedule": ("cron", "dispatch"),
    "step": ("execute", "compensate", "pivot"),
}
VALIDATE_RULES: tuple[str, ...] = ("min_len", "max_len", "format", "gt", "gte", "lt", "lte")
#: Every attribute of the language and where it may appear.
ATTRIBUTE_PLACES: dict[str, tuple[str, ...]] = {
    "primary": ("entity field",),
    "unique": ("entity field", "index"),
    "default": ("entity field", "message field"),
    "validate": ("entity field", "message field", "rpc parameter"),
    "renamed_from": ("entity field",),
    "foreign_key": ("relation",),
    "on_delete": ("relation",),
    "schema": ("entity",),
}


# --------------------------------------------------------------------------- positions


_INDENT = re.compile(r"[ \t\r]*")


class Locator:
    """Turn character offsets of one text into 1-based line/column positions."""

    __slots__ = ("_ascii", "_path", "_starts", "_text")

    def __init__(self, text: str, path: str) -> None:
        self._text = text
        self._path = path
        self._ascii = text.isascii()
        starts = [0]
        find = text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._starts = starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """Return the 1-based line and the 1-based UTF-16 column of ``offset``."""
        offset = max(0, min(offset, len(self._text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        start = self._starts[line]
        if self._ascii:  # the common case, and O(1) even on a very long line
            return line + 1, offset - start + 1
        prefix = self._text[start:offset]
        col = len(prefix) if prefix.isascii() else len(prefix.encode("utf-16-le")) // 2
        return line + 1, col + 1

    def first_on_line(self, offset: int) -> bool:
        """Return True when only whitespace precedes ``offset`` on its line."""
        start = self._starts[bisect.bisect_right(self._starts, offset) - 1]
        return _INDENT.match(self._text, start).end() >= offset  # type: ignore[union-attr]

    def pos(self, offset: int) -> Position:
        """Return the :class:`Position` of ``offset``."""
        line, col = self.line_col(offset)
        return Position(self._path, line, col)


def diagnostic_key(d: Diagnostic) -> tuple[str, int, int, str, str, str]:
    """Return the sort key of a diagnostic (the dataclass order, computed much faster)."""
    return (d.pos.file, d.pos.line, d.pos.col, d.phase, d.message, d.severity)


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Return the diagnostics without duplicates, sorted by file, line and column."""
    return sorted(set(diagnostics), key=diagnostic_key)


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """Return the closest of ``choices`` to ``word`` (case-insensitive first), or None."""
    options = list(dict.fromkeys(choices))
    lowered = {c.lower(): c for c in options}
    if word.lower() in lowered and lowered[word.lower()] != word:
        return lowered[word.lower()]
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if close:
        return close[0]
    close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return `` (did you mean "x"?)`` for the closest choice, or an empty string."""
    best = suggest(word, choices)
    return f' (did you mean "{best}"?)' if best else ""


# --------------------------------------------------------------------------- scanning


@dataclass(frozen=True, slots=True)
class Comment:
    """A ``//`` comment: its position, its text (``//`` included) and whether it is alone."""

    line: int
    col: int
    text: str
    #: True when nothing but whitespace precedes it on its line.
    standalone: bool


TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*)
  | (?P<string>"[^"\\\n]*+(?:\\[^\n][^"\\\n]*+)*+(?P<close>")?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)
  | (?P<num>[0-9]+(?:\.[0-9]+)?)
  | (?P<punct>->|[{}()\[\]:,@?;-])
  | (?P<ws>[ \t\r\n]+)
  | (?P<illegal>.|\n)
    """,
    re.VERBOSE | re.DOTALL,
)
_MEMBER_WORDS = frozenset(("rpc", "index", "step", *RELATION_KINDS))
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)


def unescape(body: str) -> str:
    r"""Resolve ``\" \\ \n \t``; any other escape keeps its backslash literally."""
    if "\\" not in body:
        return body
    return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)


def _refuse_controls(token: str, start: int, kind: str, loc: Locator, out: Scan) -> None:
    """Report each control character inside a string or comment token at its own position.

    C0 (but tab), DEL, C1 and the Unicode line/paragraph separators: raw, they would end
    up in generated code and in terminals.
    """
    body = token.rstrip("\r") if kind == "comment" else token  # a CRLF line's comment
    what = "a string" if kind == "string" else "a comment"
    for offset, char in control_characters(body):
        message = (
            f"control character U+{ord(char):04X} is not allowed in {what} "
            "(remove it, or write \\n or \\t in a string)"
        )
        out.diagnostics.append(Diagnostic(loc.pos(start + offset), "lex", message))
        out.lex_error_offsets.add(start + offset)


@dataclass
class Scan:
    comments: list[Comment] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: (start offset, first word) of each top-level chunk; the first may be a prefix.
    chunks: list[tuple[int, int, str]] = field(default_factory=list)
    lex_error_offsets: set[int] = field(default_factory=set)
    #: (start, end) offsets of every comment, blanked before parsing.
    comment_spans: list[tuple[int, int]] = field(default_factory=list)


def scan_text(text: str, loc: Locator) -> Scan:
    """Collect comments and lexical errors, and cut the text into declaration chunks."""
    out = Scan()
    starts: list[tuple[int, str]] = []
    line_start = True  # no significant token yet on the current line
    pending: tuple[int, str, bool] | None = None  # a word that may start a declaration
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        start = m.start()
        if kind == "ws":
            if "\n" in m.group():
                line_start = True
                pending = None
            continue
        if kind in ("comment", "string"):
            _refuse_controls(m.group(), start, kind, loc, out)
        if kind == "comment":
            line, col = loc.line_col(start)
            standalone = line_start
            out.comments.append(Comment(line, col, m.group().rstrip(), standalone))
            out.comment_spans.append((start, m.end()))
            continue
        if pending is not None:
            word_start, word, at_col1 = pending
            pending = None
            if kind == "word" and (
                word in DECLARATION_KEYWORDS or (at_col1 and word not in _MEMBER_WORDS)
            ):
                starts.append((word_start, word))
        if kind == "word" and line_start:
            at_col1 = start == 0 or text[start - 1] == "\n"
            pending = (start, m.group(), at_col1)
        elif kind == "string" and m.group("close") is None:
            out.diagnostics.append(Diagnostic(loc.pos(start), "lex", "unterminated string"))
            out.lex_error_offsets.add(start)
        elif kind == "illegal":
            ch = m.group()
            shown = repr(ch) if not ch.isprintable() or ch in "'\"" else f"'{ch}'"
            out.diagnostics.append(
                Diagnostic(loc.pos(start), "lex", f"unexpected character {shown}")
            )
            out.lex_error_offsets.add(start)
        line_start = False
    bounds = [s for s, _ in starts]
    first_words = [w for _, w in starts]
    if not bounds or bounds[0] != 0:
        bounds.insert(0, 0)
        first_words.insert(0, "")
    for i, begin in enumerate(bounds):
        end = bounds[i + 1] if i + 1 < len(bounds) else len(text)
        out.chunks.append((begin, end, first_words[i]))
    return out

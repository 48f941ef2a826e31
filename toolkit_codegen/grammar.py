"""Parse schema text into :mod:`toolkit_codegen.nodes`, reporting every syntax error at once.

The pipeline for one file is three passes:

1. A regular-expression *scan* (the lexer's job): it finds comments (kept in a side channel
   for doc comments and the formatter), unterminated strings and illegal characters, and
   cuts the text into top-level *chunks*, one per declaration.
2. The pyparsing grammar parses each chunk on its own. A chunk that fails yields one
   diagnostic and the next chunk is parsed anyway, so every broken declaration is reported
   in one run (recovery per declaration, as the original compiler does).
3. A builder turns the parse results into frozen nodes with 1-based positions (columns in
   UTF-16 code units, so they match LSP editors) and checks the shape of attributes, which
   the nodes cannot represent when wrong.

The grammar has no recursive rule, so no input can exhaust the stack; the scan and the
parser never raise on any text.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .nodes import (
    SCALAR_ALIASES,
    Auth,
    Default,
    Diagnostic,
    Entity,
    Enum,
    ErrorCode,
    Field,
    HttpBinding,
    Index,
    Message,
    Param,
    Position,
    Relation,
    Rpc,
    Service,
    SourceFile,
    TypeRef,
    Validation,
)

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

#: Words that can never name a declaration, field or parameter (the original's 14).
RESERVED_WORDS: frozenset[str] = frozenset(
    (
        *("entity", "service", "job", "schedule", "rpc", "index", "enum", "message"),
        *("has_many", "has_one", "belongs_to", "many_to_many", "true", "false"),
    )
)
#: Words that start a top-level declaration.
DECLARATION_KEYWORDS: tuple[str, ...] = ("entity", "message", "enum", "service")
#: Declarations of the original language that this toolkit deliberately leaves out.
UNSUPPORTED_DECLARATIONS: tuple[str, ...] = ("job", "schedule", "saga")
RELATION_KINDS: tuple[str, ...] = ("belongs_to", "has_many", "has_one", "many_to_many")
RPC_OPTIONS: tuple[str, ...] = ("http", "auth", "paginated", "errors")
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


_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\[^\n])*(?P<close>")?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<num>[0-9]+(?:\.[0-9]+)?)
  | (?P<punct>->|[{}()\[\]:,@?;-])
  | (?P<ws>[ \t\r\n]+)
  | (?P<illegal>.|\n)
    """,
    re.VERBOSE | re.DOTALL,
)
_MEMBER_WORDS = frozenset(("rpc", "index", *RELATION_KINDS))
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)


def unescape(body: str) -> str:
    r"""Resolve ``\" \\ \n \t``; any other escape keeps its backslash literally."""
    if "\\" not in body:
        return body
    return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)


@dataclass
class _Scan:
    comments: list[Comment] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: (start offset, first word) of each top-level chunk; the first may be a prefix.
    chunks: list[tuple[int, int, str]] = field(default_factory=list)
    lex_error_offsets: set[int] = field(default_factory=set)
    #: (start, end) offsets of every comment, blanked before parsing.
    comment_spans: list[tuple[int, int]] = field(default_factory=list)


def _scan(text: str, loc: Locator) -> _Scan:
    """Collect comments and lexical errors, and cut the text into declaration chunks."""
    out = _Scan()
    starts: list[tuple[int, str]] = []
    line_start = True  # no significant token yet on the current line
    pending: tuple[int, str, bool] | None = None  # a word that may start a declaration
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        start = m.start()
        if kind == "ws":
            if "\n" in m.group():
                line_start = True
                pending = None
            continue
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
                word in DECLARATION_KEYWORDS
                or word in UNSUPPORTED_DECLARATIONS
                or (at_col1 and word not in _MEMBER_WORDS)
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


# --------------------------------------------------------------------------- grammar


class Raw:
    """A parse-result node: a kind, the chunk offset of its first token and its items."""

    __slots__ = ("items", "kind", "loc")

    def __init__(self, kind: str, loc: int, items: list[Any]) -> None:
        self.kind = kind
        self.loc = loc
        self.items = items

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Raw({self.kind!r}, {self.loc}, {self.items!r})"


def _raw(kind: str) -> Any:
    def action(_s: str, loc: int, toks: Any) -> Raw:
        return Raw(kind, loc, toks.as_list())

    return action


_WS = r"[ \t\r\n]*"
_ID = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME = rf"(?!(?:{'|'.join(sorted(RESERVED_WORDS))})(?![A-Za-z0-9_])){_ID}"
_STRING = r'"(?:[^"\\\n]|\\[^\n])*"?'
#: One attribute argument: ``[key:] value``, matched in one step for speed.
_ARG_RE = re.compile(
    rf"""(?:(?P<key>{_ID}){_WS}:{_WS})?
    (?:(?P<str>{_STRING})
      |(?P<num>-?[0-9]+(?:\.[0-9]+)?)
      |(?P<call>{_ID}){_WS}\({_WS}\)
      |(?P<word>{_ID}))""",
    re.VERBOSE,
)
_HEAD_RE = re.compile(rf"({_NAME}){_WS}:")
_TYPE_RE = re.compile(rf"(?!enum{_WS}\()({_ID})(?:{_WS}(\?))?")
_CLOSED_STRING = r'"(?:[^"\\\n]|\\[^\n])*"'
#: A whole attribute ``@name(args)``; the arguments are split by :func:`_attr_action`.
#: The inside of an attribute's parentheses: strings, words (``now()`` included) and any
#: other character but parentheses. Possessive and unambiguous, so it runs in linear time
#: on any input (a word is consumed whole, never retried from each of its letters).
_ATTR_BODY = rf'(?:{_CLOSED_STRING}|[A-Za-z0-9_]+(?:{_WS}\({_WS}\))?|[^()"A-Za-z0-9_])*+'
_ATTR_RE = re.compile(
    rf"""@(?:[ \t]*({_ID}))?
    (?:{_WS}\((?P<body>{_ATTR_BODY})\)?)?""",
    re.VERBOSE,
)
_SKIP_WS = re.compile(_WS)
_CLOSED_STRING_RE = re.compile(_CLOSED_STRING)
_ATTR_SRC = rf"@(?:[ \t]*{_ID})?(?:{_WS}\({_ATTR_BODY}\)?)?"
#: The common field or parameter line ``name: type[?] @attr...`` in one step; anything
#: unusual (an inline enum, a syntax error) falls back to the element-by-element rule,
#: which reports the precise error.
_IDS = rf"{_ID}(?:{_WS},{_WS}{_ID})*+"
#: Groups: 1 name, 2 inline enum values, 3 type name, 4 ``?``, 5 attributes.
_FIELD_SRC = (
    rf"({_NAME}){_WS}:{_WS}"
    rf"(?:enum{_WS}\({_WS}({_IDS}){_WS},?{_WS}\)|(?!enum{_WS}\()({_ID}))"
    rf"(?:{_WS}(\?))?((?:{_WS}{_ATTR_SRC})*+)"
)
_FIELD_RE = re.compile(_FIELD_SRC)
_ATTRS_SRC = rf"((?:{_WS}{_ATTR_SRC})*+)"
_REL_SRC = (
    rf"({'|'.join(RELATION_KINDS)})(?![A-Za-z0-9_]){_WS}({_NAME}){_WS}:{_WS}({_ID})"
    rf"(?:{_WS}\{{{_WS}join_table{_WS}:{_WS}({_ID}){_WS}\}})?{_ATTRS_SRC}"
)
_REL_RE = re.compile(_REL_SRC)
_INDEX_SRC = rf"index{_WS}\({_WS}({_ID}(?:{_WS},{_WS}{_ID})*+){_WS}\){_ATTRS_SRC}"
_INDEX_RE = re.compile(_INDEX_SRC)


def _nocap(src: str) -> str:
    """Return a regex source with every capturing group made non-capturing.

    The run patterns only measure a span; capture groups inside their possessive repeats
    trip a CPython 3.11 ``re`` bug ("The span of capturing group is wrong").
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(src):
        c = src[i]
        if c == "\\":
            out.append(src[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if src.startswith("]", i + 1) or src.startswith("^]", i + 1):
                out.append(src[i : i + 2])
                i += 2
                continue
        elif c == "(" and not src.startswith("?", i + 1):
            out.append("(?:")
            i += 1
            continue
        elif c == "(" and src.startswith("?P<", i + 1):
            out.append("(?:")
            i = src.index(">", i) + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


_MEMBER_SRC = _nocap(rf"(?:{_FIELD_SRC}|{_REL_SRC}|{_INDEX_SRC})")
#: Consecutive plain members (fields, relations, indexes: the bulk of any schema) as one
#: pyparsing token; anything unusual ends the run and goes through the precise rules.
_MEMBER_RUN_RE = re.compile(rf"{_MEMBER_SRC}(?:{_WS}{_MEMBER_SRC})*+")
#: A whole parameter list of plain parameters (inside the parentheses).
_PARAM_RUN_RE = re.compile(_nocap(rf"{_FIELD_SRC}(?:{_WS},{_WS}{_FIELD_SRC})*+(?:{_WS},)?"))
#: The common rpc options in one step: http, plain auth, paginated (with an optional ``;``).
_ERROR_ITEM = rf"{_ID}(?:{_WS}\({_WS}{_CLOSED_STRING}{_WS}\))?"
_ERROR_ITEM_RE = re.compile(rf"({_ID})(?:{_WS}\({_WS}({_CLOSED_STRING}){_WS}\))?")
_OPTION_RE = re.compile(
    rf"""(?:http{_WS}:{_WS}(?P<method>{_ID}){_WS}(?P<path>{_CLOSED_STRING})
      |auth{_WS}:{_WS}(?P<auth>none|required)(?![A-Za-z0-9_])
        (?:{_WS}\({_WS}roles{_WS}:{_WS}\{{{_WS}(?P<roles>{_IDS}){_WS},?{_WS}\}}{_WS}\))?
        (?!{_WS}\()
      |errors{_WS}:{_WS}\{{{_WS}(?P<errors>{_ERROR_ITEM}(?:{_WS},{_WS}{_ERROR_ITEM})*+)?
        {_WS},?{_WS}\}}
      |paginated{_WS}:{_WS}(?P<paginated>true|false)(?![A-Za-z0-9_]))
    (?:{_WS};)?""",
    re.VERBOSE,
)
_ID_RE = re.compile(_ID)
_SKIP_COMMA = re.compile(rf"{_WS},?{_WS}")


def _string_value(token: str) -> str:
    """Return the value of a string token (an unterminated one keeps what it has)."""
    closed = _CLOSED_STRING_RE.fullmatch(token) is not None
    return unescape(token[1:-1] if closed else token[1:])


def _arg(m: re.Match[str]) -> Raw:
    if m.group("str") is not None:
        value = Raw("str", m.start("str"), [_string_value(m.group("str"))])
    elif m.group("num") is not None:
        text = m.group("num")
        value = Raw("num", m.start("num"), [float(text) if "." in text else int(text)])
    elif m.group("call") is not None:
        value = Raw("call", m.start("call"), [m.group("call")])
    else:
        word = m.group("word")
        kind = "bool" if word in ("true", "false") else "ident"
        value = Raw(kind, m.start("word"), [word == "true" if kind == "bool" else word])
    return Raw("arg", m.start(), [m.group("key"), value])


def _field_at(s: str, loc: int, kind: str) -> tuple[Raw, int]:
    """Build one raw field (or parameter) matched by :data:`_FIELD_RE` at ``loc``."""
    m = _FIELD_RE.match(s, loc)
    assert m is not None
    if m.group(2) is not None:  # an inline enum: the type starts at ``enum``
        start = _SKIP_WS.match(s, s.index(":", m.end(1)) + 1).end()  # type: ignore[union-attr]
        type_raw = Raw("type", start, ["enum", _ID_RE.findall(m.group(2)), m.group(4)])
    else:
        type_raw = Raw("type", m.start(3), [m.group(3), m.group(4)])
    items: list[Any] = [m.group(1), type_raw]
    i, end = m.start(5), m.end(5)
    while True:
        i = _SKIP_WS.match(s, i).end()  # type: ignore[union-attr]
        if i >= end:
            break
        items.append(_attr_action(s, i, None))
        i = _ATTR_RE.match(s, i).end()  # type: ignore[union-attr]
    return Raw(kind, loc, items), m.end()


def _field_action(kind: str) -> Any:
    def action(s: str, loc: int, _toks: Any) -> Raw:
        return _field_at(s, loc, kind)[0]

    return action


def _attrs_at(s: str, start: int, end: int) -> list[Raw]:
    """Build the raw attributes found between ``start`` and ``end``."""
    out: list[Raw] = []
    i = start
    while True:
        i = _SKIP_WS.match(s, i).end()  # type: ignore[union-attr]
        if i >= end:
            return out
        out.append(_attr_action(s, i, None))
        i = _ATTR_RE.match(s, i).end()  # type: ignore[union-attr]


def _member_at(s: str, loc: int) -> tuple[Raw, int]:
    """Build the field, relation or index that :data:`_MEMBER_RUN_RE` matched at ``loc``."""
    m = _REL_RE.match(s, loc)
    if m is not None:
        join = Raw("join", m.start(4), ["join_table", m.group(4)]) if m.group(4) else None
        items: list[Any] = [m.group(1), m.group(2), m.group(3), join]
        items += _attrs_at(s, m.start(5), m.end(5))
        return Raw("relation", loc, items), m.end()
    m = _INDEX_RE.match(s, loc)
    if m is not None:
        columns = _ID_RE.findall(m.group(1))
        items = ["index", columns, *_attrs_at(s, m.start(2), m.end(2))]
        return Raw("index", loc, items), m.end()
    return _field_at(s, loc, "field")


def _member_run_action(s: str, loc: int, toks: Any) -> list[Raw]:
    """Split a run of consecutive plain members into raw fields, relations and indexes."""
    end = loc + len(toks[0])
    out: list[Raw] = []
    i = loc
    while i < end:
        raw, i = _member_at(s, i)
        out.append(raw)
        i = _SKIP_WS.match(s, i).end()  # type: ignore[union-attr]
    return out


def _param_run_action(s: str, loc: int, toks: Any) -> list[Raw]:
    """Split a plain parameter list into raw parameters."""
    end = loc + len(toks[0])
    out: list[Raw] = []
    i = loc
    while True:
        raw, i = _field_at(s, i, "param")
        out.append(raw)
        i = _SKIP_WS.match(s, i).end()  # type: ignore[union-attr]
        if i < end and s[i] == ",":
            i = _SKIP_WS.match(s, i + 1).end()  # type: ignore[union-attr]
        if i >= end:
            return out


def _option_action(s: str, loc: int, _toks: Any) -> Raw:
    """Build a raw http, auth or paginated option matched by :data:`_OPTION_RE`."""
    m = _OPTION_RE.match(s, loc)
    assert m is not None
    if m.group("method") is not None:
        path = Raw("str", m.start("path"), [_string_value(m.group("path"))])
        return Raw("http", loc, ["http", m.group("method"), path])
    if m.group("auth") is not None:
        roles = ["roles", _ID_RE.findall(m.group("roles"))] if m.group("roles") else None
        return Raw("auth", loc, ["auth", m.group("auth"), roles])
    if m.group("paginated") is None:  # errors: { ... }
        items: list[Any] = ["errors"]
        if m.group("errors") is not None:
            i, end = m.start("errors"), m.end("errors")
            while i < end:
                e = _ERROR_ITEM_RE.match(s, i)
                assert e is not None
                message = (
                    Raw("str", e.start(2), [_string_value(e.group(2))]) if e.group(2) else None
                )
                items.append(Raw("error", e.start(), [e.group(1), message]))
                i = _SKIP_COMMA.match(s, e.end()).end()  # type: ignore[union-attr]
        return Raw("errors", loc, items)
    value = Raw("bool", m.start("paginated"), [m.group("paginated") == "true"])
    return Raw("paginated", loc, ["paginated", value])


def _attr_action(s: str, loc: int, _toks: Any) -> Raw:
    """Split ``@name(args)`` into a raw attribute, raising a fatal error at a bad argument."""
    from pyparsing import ParseFatalException

    m = _ATTR_RE.match(s, loc)
    assert m is not None
    name = m.group(1)
    if name is None:
        raise ParseFatalException(s, loc + 1, "Expected an attribute name after '@'")
    if m.group("body") is None:
        return Raw("attr", loc, [name, None])
    args: list[Raw] = []
    i = m.start("body")
    while True:
        i = _SKIP_WS.match(s, i).end()  # type: ignore[union-attr]
        if s.startswith(")", i):
            break
        am = _ARG_RE.match(s, i)
        if am is None:
            raise ParseFatalException(s, i, "Expected an argument or ')'")
        args.append(_arg(am))
        i = _SKIP_WS.match(s, am.end()).end()  # type: ignore[union-attr]
        if s.startswith(",", i):
            i += 1
            continue
        if s.startswith(")", i):
            break
        raise ParseFatalException(s, i, "Expected ',' or ')'")
    return Raw("attr", loc, [name, args])


@lru_cache(maxsize=1)
def _grammar() -> Any:
    """Build the pyparsing grammar once (pyparsing is imported only when parsing).

    Hot tokens (``name:``, a type, an attribute argument) are single regular expressions:
    pyparsing's cost is per element tried, and a field line is the most common construct.
    """
    import pyparsing as pp

    def sup(s: str) -> Any:
        return pp.Suppress(s)

    lbrace, lpar, rpar, colon, comma = sup("{"), sup("("), sup(")"), sup(":"), sup(",")

    def kw(word: str) -> Any:
        # A regex, not pp.Keyword: its failures read "expected 'word'", never pyparsing's
        # "keyword was immediately followed by keyword character".
        return pp.Regex(rf"{word}(?![A-Za-z0-9_])").set_name(f"'{word}'")

    ident = pp.Regex(_ID).set_name("identifier")
    name = pp.Regex(_NAME).set_name("a name (not a reserved word)")
    string = pp.Regex(_STRING).set_name("a string")
    string.set_parse_action(lambda _s, loc, t: Raw("str", loc, [_string_value(t[0])]))
    boolean = (kw("true") | kw("false")).set_parse_action(
        lambda _s, loc, t: Raw("bool", loc, [t[0] == "true"])
    )
    word = ident.copy().set_parse_action(lambda _s, loc, t: Raw("ident", loc, [t[0]]))

    head = pp.Regex(_HEAD_RE).set_name("a name and ':'")
    head.set_parse_action(lambda s, loc, _t: _HEAD_RE.match(s, loc).group(1))  # type: ignore[union-attr]
    attr = pp.Regex(_ATTR_RE).set_name("an attribute").set_parse_action(_attr_action)
    attrs = pp.ZeroOrMore(attr)

    idents = pp.Group(pp.Opt(pp.DelimitedList(ident, allow_trailing_delim=True)))
    inline_enum = (
        kw("enum")
        + lpar
        - idents
        + sup(")").set_name("',' or ')'")
        + pp.Opt(pp.Literal("?"), default=None)
    ).set_parse_action(_raw("type"))
    plain_type = pp.Regex(_TYPE_RE).set_name("a type")
    plain_type.set_parse_action(
        lambda s, loc, _t: Raw("type", loc, list(_TYPE_RE.match(s, loc).groups()))  # type: ignore[union-attr]
    )
    type_ref = (plain_type | inline_enum).set_name("a type")

    fast_field = pp.Regex(_FIELD_RE).set_parse_action(_field_action("field"))
    fld = fast_field | (head - type_ref + attrs).set_parse_action(_raw("field"))
    join = (lbrace - kw("join_table") + colon + ident + sup("}")).set_parse_action(_raw("join"))
    relation = (
        pp.Regex(rf"(?:{'|'.join(RELATION_KINDS)})(?![A-Za-z0-9_])").set_name("a relation")
        - head
        + ident.copy().set_name("a target entity")
        + pp.Opt(join, default=None)
        + attrs
    ).set_parse_action(_raw("relation"))
    index = (
        kw("index")
        + lpar
        - pp.Group(pp.DelimitedList(ident))
        + sup(")").set_name("',' or ')'")
        + attrs
    ).set_parse_action(_raw("index"))

    def close(what: str) -> Any:
        return (
            pp.Literal("}").set_name(what).set_parse_action(lambda _s, loc, _t: Raw("end", loc, []))
        )

    member_run = pp.Regex(_MEMBER_RUN_RE).set_name("a field").set_parse_action(_member_run_action)
    member = member_run | relation | index | fld
    entity = (
        kw("entity")
        - name
        + attrs
        + lbrace
        + pp.ZeroOrMore(member)
        + close("a field, relation, index or '}'")
    ).set_parse_action(_raw("entity"))
    message = (
        kw("message") - name + lbrace + pp.ZeroOrMore(member) + close("a field or '}'")
    ).set_parse_action(_raw("message"))
    enum_value = word.copy().set_name("an enum value")
    enum = (
        kw("enum")
        - name
        + lbrace
        + pp.Opt(enum_value + pp.ZeroOrMore(pp.Opt(comma) + enum_value) + pp.Opt(comma))
        + close("an enum value, ',' or '}'")
    ).set_parse_action(_raw("enum"))

    fast_param = pp.Regex(_FIELD_RE).set_parse_action(_field_action("param"))
    param = fast_param | (head - type_ref + attrs).set_parse_action(_raw("param"))
    param_run = pp.Regex(_PARAM_RUN_RE).set_parse_action(_param_run_action)
    params = pp.Group(
        pp.Opt(
            (param_run + pp.FollowedBy(")")) | pp.DelimitedList(param, allow_trailing_delim=True)
        )
    )
    http = (kw("http") + colon - ident.copy().set_name("an HTTP method") + string).set_parse_action(
        _raw("http")
    )
    roles = pp.Group(lpar - kw("roles") + colon + lbrace + idents + sup("}") + rpar)
    auth = (
        kw("auth") + colon - ident.copy().set_name("none or required") + pp.Opt(roles, default=None)
    ).set_parse_action(_raw("auth"))
    paginated = (
        kw("paginated") + colon - boolean.copy().set_name("true or false")
    ).set_parse_action(_raw("paginated"))
    error_item = (ident + pp.Opt(lpar - string + rpar, default=None)).set_parse_action(
        _raw("error")
    )
    errors = (
        kw("errors")
        + colon
        - lbrace
        + pp.Opt(pp.DelimitedList(error_item, allow_trailing_delim=True))
        + sup("}")
    ).set_parse_action(_raw("errors"))
    rest = pp.Regex(r"[^;\n}]*").set_whitespace_chars(" \t")
    unknown = (ident + colon + rest).set_parse_action(_raw("unknown_option"))
    fast_option = pp.Regex(_OPTION_RE).set_parse_action(_option_action)
    option = fast_option | ((http | auth | paginated | errors | unknown) + pp.Opt(sup(";")))
    options = (
        lbrace
        + pp.ZeroOrMore(option)
        + close("an rpc option (http, auth, paginated, errors) or '}'")
    ).set_parse_action(_raw("options"))
    rpc = (
        kw("rpc")
        - name
        + lpar
        + params
        + sup(")").set_name("',' or ')'")
        + sup("->")
        + ident.copy()
        .set_name("a return type")
        .set_parse_action(lambda _s, loc, t: Raw("returns", loc, [t[0]]))
        + pp.Opt(options, default=None)
    ).set_parse_action(_raw("rpc"))
    service = (
        kw("service") - name + lbrace + pp.ZeroOrMore(rpc) + close("an rpc or '}'")
    ).set_parse_action(_raw("service"))
    declaration = (entity | message | enum | service).set_name(
        "a declaration (entity, message, enum or service)"
    )
    # Comments are blanked out by the scan (offsets kept), so the grammar needs no
    # ignore-expression: that keeps the parser about twice as fast.
    top = pp.OneOrMore(declaration)
    top.parse_with_tabs()  # pyparsing would expand tabs and shift every offset after one
    top.streamline()
    return top, pp.ParseBaseException


# --------------------------------------------------------------------------- building


@dataclass
class ParsedFile:
    """One parsed file: its declarations, diagnostics and the side channels of the text."""

    path: str
    text: str
    source: SourceFile
    diagnostics: list[Diagnostic]
    comments: list[Comment]
    #: Position of a block's owner (entity, message, enum, service, rpc) -> its closing ``}``.
    ends: dict[Position, Position] = field(default_factory=dict)
    #: Position of an rpc -> {option label: position of the label}.
    option_pos: dict[Position, dict[str, Position]] = field(default_factory=dict)
    #: Position of a named enum -> the position of each value.
    value_pos: dict[Position, tuple[Position, ...]] = field(default_factory=dict)
    #: Names of declarations that failed to parse (references to them are not reported
    #: again as unknown: the syntax error already explains them).
    broken_names: set[str] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        """Return True when the file has no error-severity diagnostic."""
        return not any(d.severity == "error" for d in self.diagnostics)


_FORMATS = ("email", "url", "uuid")


class _Builder:
    """Turn :class:`Raw` parse results of one file into nodes, checking attribute shapes."""

    def __init__(self, loc: Locator, comments: list[Comment], out: ParsedFile) -> None:
        self.loc = loc
        self.offset = 0
        self.out = out
        self.docs = {c.line: c.text for c in comments if c.standalone}
        self.entities: list[Entity] = []
        self.messages: list[Message] = []
        self.enums: list[Enum] = []
        self.services: list[Service] = []

    # -- helpers

    def pos(self, raw: Raw) -> Position:
        return self.loc.pos(self.offset + raw.loc)

    def error(self, raw: Raw, message: str, phase: str = "parse") -> None:
        self.out.diagnostics.append(Diagnostic(self.pos(raw), phase, message))

    def doc(self, raw: Raw) -> str:
        """Return the comment lines right above ``raw`` when it starts its line."""
        offset = self.offset + raw.loc
        if not self.loc.first_on_line(offset):
            return ""
        pos = self.loc.pos(offset)
        lines: list[str] = []
        line = pos.line - 1
        while line in self.docs:
            text = self.docs[line][2:]
            lines.append(text[1:] if text.startswith(" ") else text)
            line -= 1
        return "\n".join(reversed(lines))

    def end(self, owner: Position, raw: Raw) -> None:
        self.out.ends[owner] = self.pos(raw)

    # -- declarations

    def declaration(self, raw: Raw) -> None:
        getattr(self, "_" + raw.kind)(raw)

    def _entity(self, raw: Raw) -> None:
        pos = self.pos(raw)
        attrs = self.attributes([r for r in raw.items[2:] if r.kind == "attr"], "entity")
        db_schema = self.single_name(attrs["schema"]) if "schema" in attrs else None
        fields, relations, indexes = self.members(raw.items[2:], "entity")
        self.end(pos, raw.items[-1])
        self.entities.append(
            Entity(
                raw.items[1],
                pos,
                tuple(fields),
                tuple(relations),
                tuple(indexes),
                db_schema=db_schema,
                doc=self.doc(raw),
            )
        )

    def _message(self, raw: Raw) -> None:
        pos = self.pos(raw)
        fields, relations, indexes = self.members(raw.items[2:], "message")
        for r in (*relations, *indexes):
            what = "relations" if isinstance(r, Relation) else "indexes"
            self.out.diagnostics.append(
                Diagnostic(r.pos, "parse", f"a message cannot have {what}; use an entity")
            )
        self.end(pos, raw.items[-1])
        self.messages.append(Message(raw.items[1], pos, tuple(fields), doc=self.doc(raw)))

    def _enum(self, raw: Raw) -> None:
        pos = self.pos(raw)
        value_raws = [r for r in raw.items[2:] if r.kind == "ident"]
        values = tuple(r.items[0] for r in value_raws)
        self.out.value_pos[pos] = tuple(self.pos(r) for r in value_raws)
        self.end(pos, raw.items[-1])
        self.enums.append(Enum(raw.items[1], values, pos, doc=self.doc(raw)))

    def _service(self, raw: Raw) -> None:
        pos = self.pos(raw)
        rpcs = tuple(self.rpc(r) for r in raw.items[2:] if r.kind == "rpc")
        self.end(pos, raw.items[-1])
        self.services.append(Service(raw.items[1], pos, rpcs, doc=self.doc(raw)))

    # -- members

    def members(
        self, raws: list[Any], place: str
    ) -> tuple[list[Field], list[Relation], list[Index]]:
        fields: list[Field] = []
        relations: list[Relation] = []
        indexes: list[Index] = []
        for r in raws:
            if not isinstance(r, Raw):
                continue
            if r.kind == "field":
                fields.append(self.field(r, place))
            elif r.kind == "relation":
                relations.append(self.relation(r))
            elif r.kind == "index":
                indexes.append(self.index(r))
        return fields, relations, indexes

    def type_ref(self, raw: Raw) -> TypeRef:
        items = raw.items
        optional = items[-1] == "?"
        if items[0] == "enum" and len(items) == 3 and isinstance(items[1], list):
            return TypeRef("enum", self.pos(raw), optional, tuple(items[1]))
        return TypeRef(SCALAR_ALIASES.get(items[0], items[0]), self.pos(raw), optional)

    def field(self, raw: Raw, place: str) -> Field:
        pos = self.pos(raw)
        name, type_raw, *attr_raws = raw.items
        attrs = self.attributes(attr_raws, f"{place} field")
        return Field(
            name,
            self.type_ref(type_raw),
            pos,
            primary="primary" in attrs and self.flag(attrs["primary"]),
            unique="unique" in attrs and self.flag(attrs["unique"]),
            default=self.default(attrs["default"]) if "default" in attrs else None,
            validation=self.validation(attrs["validate"]) if "validate" in attrs else None,
            renamed_from=self.string(attrs["renamed_from"]) if "renamed_from" in attrs else None,
            doc=self.doc(raw),
        )

    def relation(self, raw: Raw) -> Relation:
        kind, name, target, join, *attr_raws = raw.items
        attrs = self.attributes(attr_raws, "relation")
        pos = self.pos(raw)
        foreign_key = self.single_name(attrs["foreign_key"]) if "foreign_key" in attrs else None
        on_delete = self.single_name(attrs["on_delete"]) if "on_delete" in attrs else None
        if kind == "many_to_many":
            for key in ("foreign_key", "on_delete"):
                if key in attrs:
                    self.error(attrs[key], f"@{key} is not allowed on many_to_many")
        elif join is not None:
            self.error(join, f"{{ join_table: ... }} is only allowed on many_to_many, not {kind}")
        return Relation(
            kind,
            name,
            target,
            pos,
            foreign_key=foreign_key if kind != "many_to_many" else None,
            on_delete=on_delete or "restrict",
            join_table=join.items[1] if join is not None and kind == "many_to_many" else None,
        )

    def index(self, raw: Raw) -> Index:
        _, columns, *attr_raws = raw.items
        attrs = self.attributes(attr_raws, "index")
        unique = "unique" in attrs and self.flag(attrs["unique"])
        return Index(tuple(columns), self.pos(raw), unique=unique)

    # -- rpcs

    def rpc(self, raw: Raw) -> Rpc:
        pos = self.pos(raw)
        _, name, param_raws, returns, options = raw.items
        params = tuple(self.param(p) for p in param_raws)
        http: HttpBinding | None = None
        auth: Auth | None = None
        paginated = False
        errors: tuple[ErrorCode, ...] = ()
        labels: dict[str, Position] = {}
        if options is not None:
            self.end(pos, options.items[-1])
            for opt in options.items[:-1]:
                label = opt.items[0]
                opt_pos = self.pos(opt)
                if opt.kind == "unknown_option":
                    hint = did_you_mean(label, RPC_OPTIONS)
                    extra = (
                        " (permissions are not supported; use auth: required(roles: {...}))"
                        if label == "permission"
                        else hint
                    )
                    self.error(
                        opt,
                        f'unknown rpc option "{label}"{extra}; expected one of '
                        + ", ".join(RPC_OPTIONS),
                    )
                    continue
                labels[opt.kind] = opt_pos
                if opt.kind == "http":
                    http = HttpBinding(opt.items[1], opt.items[2].items[0], opt_pos)
                elif opt.kind == "auth":
                    auth = self.auth(opt, opt_pos)
                elif opt.kind == "paginated":
                    paginated = opt.items[1].items[0]
                elif opt.kind == "errors":
                    errors = tuple(
                        ErrorCode(
                            e.items[0],
                            self.pos(e),
                            e.items[1].items[0] if e.items[1] is not None else None,
                        )
                        for e in opt.items[1:]
                    )
        if labels:
            self.out.option_pos[pos] = labels
        return Rpc(
            name,
            params,
            TypeRef(returns.items[0], self.pos(returns)),
            pos,
            http=http,
            auth=auth,
            paginated=paginated,
            errors=errors,
            doc=self.doc(raw),
        )

    def auth(self, opt: Raw, pos: Position) -> Auth:
        value, roles = opt.items[1], opt.items[2]
        role_names = tuple(roles[1]) if roles is not None else ()
        if value == "none":
            if roles is not None:
                self.error(opt, "auth: none cannot list roles; write auth: required(roles: {...})")
            return Auth(pos, required=False)
        if value != "required":
            hint = did_you_mean(value, ("none", "required"))
            self.error(
                opt,
                f'unknown auth value "{value}"{hint}; expected none, required or '
                "required(roles: {...})",
            )
        elif roles is not None and not role_names:
            self.error(opt, "auth: required(roles: {}) needs at least one role")
        return Auth(pos, required=True, roles=role_names)

    def param(self, raw: Raw) -> Param:
        name, type_raw, *attr_raws = raw.items
        attrs = self.attributes(attr_raws, "rpc parameter")
        return Param(
            name,
            self.type_ref(type_raw),
            self.pos(raw),
            validation=self.validation(attrs["validate"]) if "validate" in attrs else None,
        )

    # -- attributes

    def attributes(self, raws: list[Raw], place: str) -> dict[str, Raw]:
        found: dict[str, Raw] = {}
        for a in raws:
            name = a.items[0]
            if name not in ATTRIBUTE_PLACES:
                allowed = [k for k, v in ATTRIBUTE_PLACES.items() if place in v]
                hint = did_you_mean(name, allowed or ATTRIBUTE_PLACES)
                self.error(a, f"unknown attribute @{name}{hint}", "resolve")
            elif place not in ATTRIBUTE_PLACES[name]:
                where = " or ".join(ATTRIBUTE_PLACES[name])
                self.error(
                    a,
                    f"@{name} is not allowed on {_article(place)}; it goes on {_article(where)}",
                    "resolve",
                )
            elif name in found:
                self.error(a, f"duplicate attribute @{name}", "resolve")
            else:
                found[name] = a
        return found

    def args(self, attr: Raw) -> list[Raw]:
        return attr.items[1] if attr.items[1] is not None else []

    def positional(self, attr: Raw, kinds: tuple[str, ...], what: str) -> Raw | None:
        args = self.args(attr)
        if len(args) != 1 or args[0].items[0] is not None or args[0].items[1].kind not in kinds:
            self.error(attr, f"@{attr.items[0]} takes {what}", "resolve")
            return None
        return args[0].items[1]

    def flag(self, attr: Raw) -> bool:
        if self.args(attr):
            self.error(attr, f"@{attr.items[0]} takes no arguments", "resolve")
        return True

    def string(self, attr: Raw) -> str | None:
        value = self.positional(attr, ("str",), 'one string, e.g. @renamed_from("old_name")')
        return value.items[0] if value is not None else None

    def single_name(self, attr: Raw) -> str | None:
        value = self.positional(attr, ("ident", "str"), "one name")
        return value.items[0] if value is not None else None

    def default(self, attr: Raw) -> Default | None:
        value = self.positional(
            attr,
            ("call", "str", "num", "bool", "ident"),
            "one value: now(), a literal or an enum value",
        )
        if value is None:
            return None
        pos = self.pos(value)
        if value.kind == "call":
            if value.items[0] != "now":
                self.error(
                    value,
                    f"unknown function {value.items[0]}(); only now() is supported",
                    "resolve",
                )
                return None
            return Default(pos, "now")
        if value.kind == "ident":
            return Default(pos, "enum", value.items[0])
        return Default(pos, "literal", value.items[0])

    def validation(self, attr: Raw) -> Validation | None:
        rules: dict[str, Any] = {}
        for arg in self.args(attr):
            key, value = arg.items
            if key is None:
                self.error(
                    arg, f"@validate takes named rules ({', '.join(VALIDATE_RULES)})", "resolve"
                )
                continue
            if key not in VALIDATE_RULES:
                self.error(
                    arg,
                    f"unknown @validate rule {key}{did_you_mean(key, VALIDATE_RULES)}",
                    "resolve",
                )
                continue
            if key in rules:
                self.error(arg, f"duplicate @validate rule {key}", "resolve")
                continue
            v = value.items[0]
            if key in ("min_len", "max_len"):
                if value.kind != "num" or not isinstance(v, int) or v < 0:
                    self.error(value, f"{key} must be a non-negative integer", "resolve")
                    continue
            elif key == "format":
                if value.kind != "str" or v not in _FORMATS:
                    shown = v if isinstance(v, str) else str(v)
                    self.error(
                        value,
                        f'unknown format "{shown}"{did_you_mean(shown, _FORMATS)}; '
                        'expected "email", "url" or "uuid"',
                        "resolve",
                    )
                    continue
            elif value.kind != "num":
                self.error(value, f"{key} must be a number", "resolve")
                continue
            rules[key] = v
        if not rules:
            if not self.args(attr):
                self.error(attr, "@validate needs at least one rule", "resolve")
            return None
        return Validation(self.pos(attr), **rules)


def _article(place: str) -> str:
    return ("an " if place[0] in "aeiou" else "a ") + place


# Possessive quantifiers (``++``, ``*+``): whitespace runs must never be re-split on
# backtracking, or a long run of blanks before a stray character takes exponential time.
_BLANK = re.compile(r"(?:[ \t\r\n]++|//[^\n]*+)*+")


def _found(text: str, at: int) -> tuple[int, str]:
    """Return the offset of the next token at or after ``at`` and a description of it."""
    at = _BLANK.match(text, at).end()  # type: ignore[union-attr]
    if at >= len(text):
        return at, "end of file"
    m = _TOKEN.match(text, at)
    assert m is not None
    if m.lastgroup == "string":
        return at, "a string"
    token = m.group()
    return at, f"'{token}'" if token.isprintable() else repr(token)


def _unclosed(chunk: str) -> int | None:
    """Return the chunk offset of the innermost ``{`` that is never closed, if any."""
    stack: list[int] = []
    for m in _TOKEN.finditer(chunk):
        if m.lastgroup == "punct":
            if m.group() == "{":
                stack.append(m.start())
            elif m.group() == "}" and stack:
                stack.pop()
    return stack[-1] if stack else None


_DECL_NAME = re.compile(rf"(?m)^[ \t]*(?:{'|'.join(DECLARATION_KEYWORDS)})[ \t]+({_ID})")
_EMPTY = re.compile(r"(?:[ \t\r\n]++|//[^\n]*+)*+\Z")


def parse_file(text: str, path: str) -> ParsedFile:
    """Parse one file's text; never raises, reports every broken declaration."""
    if text.startswith("\ufeff"):
        text = text[1:]
    loc = Locator(text, path)
    scan = _scan(text, loc)
    out = ParsedFile(path, text, SourceFile(path), list(scan.diagnostics), scan.comments)
    builder = _Builder(loc, scan.comments, out)
    code = _blank_comments(text, scan.comment_spans)
    top, parse_error = _grammar()
    for begin, end, first in scan.chunks:
        chunk = code[begin:end]
        if _EMPTY.match(chunk):
            continue
        if first in UNSUPPORTED_DECLARATIONS:
            out.diagnostics.append(
                Diagnostic(
                    loc.pos(begin),
                    "parse",
                    f"{first} declarations are not supported by this toolkit "
                    "(use the queue and scheduler batteries from code)",
                )
            )
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
    text: str, chunk: str, begin: int, end: int, exc: Any, loc: Locator, scan: _Scan
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
        expected = "expected a declaration (entity, message, enum or service)"
    if found == "'}'" and expected.startswith("expected a declaration"):
        return [Diagnostic(loc.pos(at), "parse", "unbalanced braces: unexpected '}'")]
    hint = ""
    if expected.startswith("expected a declaration") and found.startswith("'"):
        hint = did_you_mean(found.strip("'"), DECLARATION_KEYWORDS)
    elif found.strip("'") in RESERVED_WORDS:
        hint = f" ({found} is a reserved word and cannot be a name)"
    return [Diagnostic(loc.pos(at), "parse", f"{expected}, found {found}{hint}")]

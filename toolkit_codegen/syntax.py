"""The second pass: the pyparsing grammar that parses one declaration chunk.

Each top-level chunk the scan found is parsed on its own, into :class:`Raw` records
(kind, fields, position offset) that :mod:`.building` turns into nodes. The grammar has no
recursive rule, so no input can exhaust the stack; the hot repetitive parts (fields,
parameters, attributes) are matched by precompiled regular expressions inside parse
actions, which keeps a 500-entity schema fast.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .scanning import RELATION_KINDS, RESERVED_WORDS, unescape

__all__ = ["IDENTIFIER", "Raw", "declaration_grammar", "number_value"]

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
IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME = rf"(?!(?:{'|'.join(sorted(RESERVED_WORDS))})(?![A-Za-z0-9_])){IDENTIFIER}"
#: A string's body, unrolled and possessive: linear time and constant memory on any length
#: (the alternation ``(?:[^"\\]|\\.)*`` kept one backtracking frame per character).
_STRING_BODY = r'[^"\\\n]*+(?:\\[^\n][^"\\\n]*+)*+'
_STRING = rf'"{_STRING_BODY}"?'
#: One attribute argument: ``[key:] value``, matched in one step for speed.
_ARG_RE = re.compile(
    rf"""(?:(?P<key>{IDENTIFIER}){_WS}:{_WS})?
    (?:(?P<str>{_STRING})
      |(?P<num>-?[0-9]+(?:\.[0-9]+)?)
      |(?P<call>{IDENTIFIER}){_WS}\({_WS}\)
      |(?P<word>{IDENTIFIER}))""",
    re.VERBOSE,
)
_HEAD_RE = re.compile(rf"({_NAME}){_WS}:")
_TYPE_RE = re.compile(rf"(?!enum{_WS}\()({IDENTIFIER})(?:{_WS}(\?))?")
_CLOSED_STRING = rf'"{_STRING_BODY}"'
#: A whole attribute ``@name(args)``; the arguments are split by :func:`_attr_action`.
#: The inside of an attribute's parentheses: strings, words (``now()`` included) and any
#: other character but parentheses. Possessive and unambiguous, so it runs in linear time
#: on any input (a word is consumed whole, never retried from each of its letters).
_ATTR_BODY = rf'(?:{_CLOSED_STRING}|[A-Za-z0-9_]+(?:{_WS}\({_WS}\))?|[^()"A-Za-z0-9_])*+'
_ATTR_RE = re.compile(
    rf"""@(?:[ \t]*({IDENTIFIER}))?
    (?:{_WS}\((?P<body>{_ATTR_BODY})\)?)?""",
    re.VERBOSE,
)
_SKIP_WS = re.compile(_WS)
_CLOSED_STRING_RE = re.compile(_CLOSED_STRING)
_ATTR_SRC = rf"@(?:[ \t]*{IDENTIFIER})?(?:{_WS}\({_ATTR_BODY}\)?)?"
#: The common field or parameter line ``name: type[?] @attr...`` in one step; anything
#: unusual (an inline enum, a syntax error) falls back to the element-by-element rule,
#: which reports the precise error.
_IDS = rf"{IDENTIFIER}(?:{_WS},{_WS}{IDENTIFIER})*+"
#: Groups: 1 name, 2 inline enum values, 3 type name, 4 ``?``, 5 attributes.
_FIELD_SRC = (
    rf"({_NAME}){_WS}:{_WS}"
    rf"(?:enum{_WS}\({_WS}({_IDS}){_WS},?{_WS}\)|(?!enum{_WS}\()({IDENTIFIER}))"
    rf"(?:{_WS}(\?))?((?:{_WS}{_ATTR_SRC})*+)"
)
_FIELD_RE = re.compile(_FIELD_SRC)
_ATTRS_SRC = rf"((?:{_WS}{_ATTR_SRC})*+)"
_REL_SRC = (
    rf"({'|'.join(RELATION_KINDS)})(?![A-Za-z0-9_]){_WS}({_NAME}){_WS}:{_WS}({IDENTIFIER})"
    rf"(?:{_WS}\{{{_WS}join_table{_WS}:{_WS}({IDENTIFIER}){_WS}\}})?{_ATTRS_SRC}"
)
_REL_RE = re.compile(_REL_SRC)
_INDEX_SRC = rf"index{_WS}\({_WS}({IDENTIFIER}(?:{_WS},{_WS}{IDENTIFIER})*+){_WS}\){_ATTRS_SRC}"
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
_ERROR_ITEM = rf"{IDENTIFIER}(?:{_WS}\({_WS}{_CLOSED_STRING}{_WS}\))?"
_ERROR_ITEM_RE = re.compile(rf"({IDENTIFIER})(?:{_WS}\({_WS}({_CLOSED_STRING}){_WS}\))?")
_OPTION_RE = re.compile(
    rf"""(?:http{_WS}:{_WS}(?P<method>{IDENTIFIER}){_WS}(?P<path>{_CLOSED_STRING})
      |auth{_WS}:{_WS}(?P<auth>none|required)(?![A-Za-z0-9_])
        (?:{_WS}\({_WS}roles{_WS}:{_WS}\{{{_WS}(?P<roles>{_IDS}){_WS},?{_WS}\}}{_WS}\))?
        (?!{_WS}\()
      |errors{_WS}:{_WS}\{{{_WS}(?P<errors>{_ERROR_ITEM}(?:{_WS},{_WS}{_ERROR_ITEM})*+)?
        {_WS},?{_WS}\}}
      |paginated{_WS}:{_WS}(?P<paginated>true|false)(?![A-Za-z0-9_]))
    (?:{_WS};)?""",
    re.VERBOSE,
)
_ID_RE = re.compile(IDENTIFIER)
_SKIP_COMMA = re.compile(rf"{_WS},?{_WS}")


def number_value(text: str) -> int | float:
    """Return the value of a number token; one no backend can write is an infinity.

    ``float("9" * 400 + ".0")`` is ``inf`` and ``int("9" * 5000)`` raises, so such a
    literal becomes ``inf`` (or ``-inf``), which validation refuses at its position
    instead of a backend writing ``default=inf`` or crashing.
    """
    if "." in text:
        return float(text)
    digits = len(text.lstrip("-"))
    if digits > 400:  # far beyond every numeric type; int() refuses over 4300 digits
        return float("-inf") if text.startswith("-") else float("inf")
    return int(text)


def _string_value(token: str) -> str:
    """Return the value of a string token (an unterminated one keeps what it has)."""
    closed = _CLOSED_STRING_RE.fullmatch(token) is not None
    return unescape(token[1:-1] if closed else token[1:])


def _arg(m: re.Match[str]) -> Raw:
    if m.group("str") is not None:
        value = Raw("str", m.start("str"), [_string_value(m.group("str"))])
    elif m.group("num") is not None:
        text = m.group("num")
        value = Raw("num", m.start("num"), [number_value(text)])
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
def declaration_grammar() -> Any:
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

    ident = pp.Regex(IDENTIFIER).set_name("identifier")
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
    # ``[string]``, ``[int]?``: a list of scalars (the builder checks the element).
    list_type = (
        pp.Literal("[")
        - pp.Regex(IDENTIFIER).set_name("an element type (a scalar such as string or int)")
        + sup("]").set_name("']'")
        + pp.Opt(pp.Literal("?"), default=None)
    ).set_parse_action(_raw("list_type"))
    type_ref = (plain_type | inline_enum | list_type).set_name("a type")

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
    permission = (
        kw("permission")
        + colon
        - _call_expr(pp, string, boolean, word).set_name("check(...) or none")
    ).set_parse_action(_raw("permission"))
    fast_option = pp.Regex(_OPTION_RE).set_parse_action(_option_action)
    option = fast_option | (
        (http | auth | paginated | errors | permission | unknown) + pp.Opt(sup(";"))
    )
    options = (
        lbrace
        + pp.ZeroOrMore(option)
        + close("an rpc option (http, auth, permission, paginated, errors) or '}'")
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
    job, schedule, saga = _background_declarations(pp, kw, name, params, string, boolean, word)
    declaration = (entity | message | enum | service | job | schedule | saga).set_name(
        "a declaration (entity, message, enum, service, job, schedule or saga)"
    )
    # Comments are blanked out by the scan (offsets kept), so the grammar needs no
    # ignore-expression: that keeps the parser about twice as fast.
    top = pp.OneOrMore(declaration)
    top.parse_with_tabs()  # pyparsing would expand tabs and shift every offset after one
    top.streamline()
    return top, pp.ParseBaseException


#: A duration literal: an integer and a unit (``30s``, ``5m``, ``250ms``).
DURATION = r"[0-9]+(?:ns|us|ms|s|m|h)(?![A-Za-z0-9_])"
_QUALIFIED = rf"({IDENTIFIER})\.({IDENTIFIER})"


def _values(pp: Any, string: Any, boolean: Any, word: Any) -> Any:
    """Return the plain value rule: a duration, number, string, boolean, ``A.b`` or name."""
    duration = pp.Regex(DURATION).set_name("a duration")
    duration.set_parse_action(lambda _s, loc, t: Raw("dur", loc, [t[0]]))
    num = pp.Regex(r"-?[0-9]+(?:\.[0-9]+)?(?![A-Za-z0-9_.])").set_name("a number")
    num.set_parse_action(lambda _s, loc, t: Raw("num", loc, [number_value(t[0])]))
    qualified = pp.Regex(_QUALIFIED).set_name("Service.Rpc")
    qualified.set_parse_action(
        lambda _s, loc, t: Raw("ref", loc, list(re.match(_QUALIFIED, t[0]).groups()))  # type: ignore[union-attr]
    )
    return (duration | num | string | boolean | qualified | word).set_name("a value")


def _call_expr(pp: Any, string: Any, boolean: Any, word: Any) -> Any:
    """Return ``name(args)`` or a plain value; arguments are ``[key:] value`` or one nested call.

    The nesting is one level deep on purpose (no recursive rule): a nested call is only
    parsed so that the validator can reject it with a precise message.
    """
    value = _values(pp, string, boolean, word)
    ident = pp.Regex(IDENTIFIER).set_name("identifier")
    lpar, rpar, colon = pp.Suppress("("), pp.Suppress(")"), pp.Suppress(":")
    inner = (
        ident + lpar + pp.Group(pp.Opt(pp.DelimitedList(value))) + rpar.copy().set_name("')'")
    ).set_parse_action(_raw("call"))
    key = pp.Opt(pp.Regex(rf"{IDENTIFIER}(?={_WS}:)") + colon, default=None)
    arg = (key + (inner | value)).set_parse_action(_raw("arg"))
    call = (
        ident
        + lpar
        - pp.Group(pp.Opt(pp.DelimitedList(arg, allow_trailing_delim=True)))
        + rpar.copy().set_name("',' or ')'")
    ).set_parse_action(_raw("call"))
    return call | value


def _background_declarations(
    pp: Any, kw: Any, name: Any, params: Any, string: Any, boolean: Any, word: Any
) -> tuple[Any, Any, Any]:
    """Return the ``job``, ``schedule`` and ``saga`` declaration rules.

    Their bodies are ``label: value[, value]`` options (``;`` optional); the builder
    checks the labels and values, so an unknown label gets a "did you mean".
    """
    lbrace, lpar, colon = pp.Suppress("{"), pp.Suppress("("), pp.Suppress(":")
    ident = pp.Regex(IDENTIFIER).set_name("an option name")
    expr = _call_expr(pp, string, boolean, word)
    option = (
        ident
        + colon
        - pp.Group(pp.DelimitedList(expr)).set_name("a value")
        + pp.Opt(pp.Suppress(";"))
    ).set_parse_action(_raw("option"))

    def close(what: str) -> Any:
        return (
            pp.Literal("}").set_name(what).set_parse_action(lambda _s, loc, _t: Raw("end", loc, []))
        )

    body = pp.Opt(
        (
            lbrace + pp.ZeroOrMore(option) + close("a job option (queue, retry) or '}'")
        ).set_parse_action(_raw("options")),
        default=None,
    )
    job = (
        kw("job") - name + lpar + params + pp.Suppress(")").set_name("',' or ')'") + body
    ).set_parse_action(_raw("job"))
    schedule = (
        kw("schedule")
        - name
        + lbrace
        + pp.ZeroOrMore(option)
        + close("a schedule option (cron, dispatch) or '}'")
    ).set_parse_action(_raw("schedule"))
    step = (
        kw("step")
        - name
        + lbrace
        + pp.ZeroOrMore(option)
        + close("a step option (execute, compensate, pivot) or '}'")
    ).set_parse_action(_raw("step"))
    saga = (
        kw("saga") - name + lbrace + pp.ZeroOrMore(step) + close("a step or '}'")
    ).set_parse_action(_raw("saga"))
    return job, schedule, saga

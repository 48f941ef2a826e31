"""The one way schema text enters generated code: one escaping function per target language.

A schema is often written by someone other than the person who reviews the code generated
from it, so no backend pastes schema text into a file by hand. Python string literals go
through :func:`py_string`, docstring bodies through :func:`py_docstring`, generated names
through :func:`py_identifier` (which refuses, never repairs), SQL through
:func:`sql_string` and :func:`sql_identifier`, JSON through :func:`json_string`, and text
shown on a terminal through :func:`terminal_text`. Each returns text that the target's
parser reads back as exactly the input, or raises :class:`UnsafeTextError`.
"""

from __future__ import annotations

import json
import keyword
import re

__all__ = [
    "ASCII_IDENTIFIER",
    "UnsafeTextError",
    "control_characters",
    "is_python_identifier",
    "json_string",
    "py_docstring",
    "py_identifier",
    "py_string",
    "sql_identifier",
    "sql_string",
    "terminal_text",
]

#: The names the schema language itself allows (and the only module directory names).
ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_OR_TAB = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class UnsafeTextError(ValueError):
    """Text that a target language cannot carry (the message says which rule)."""


def control_characters(text: str, *, allow_tab: bool = True) -> list[tuple[int, str]]:
    """Return ``(offset, character)`` of every control character in ``text``."""
    pattern = _CONTROL if allow_tab else _CONTROL_OR_TAB
    return [(m.start(), m.group()) for m in pattern.finditer(text)]


def _escape_char(ch: str) -> str:
    """Return the Python escape of one character (``\\n``, ``\\x00``, ``\\u2028``)."""
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
    if ch in named:
        return named[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _needs_escape(ch: str) -> bool:
    """Return True for a character a generated file must not hold raw."""
    return ch == "\\" or not ch.isprintable() or "\ud800" <= ch <= "\udfff"


def py_string(text: str) -> str:
    """Return ``text`` as a Python string literal that evaluates to exactly ``text``.

    Double quotes unless the text holds ``"`` and no ``'`` (the form ``ruff format``
    prefers); backslashes and every non-printable character are escaped.
    """
    if text.isprintable() and "\\" not in text:
        if '"' not in text:
            return f'"{text}"'
        if "'" not in text:
            return f"'{text}'"
    if text.isascii():
        return json.dumps(text)  # a JSON string of ASCII text is a Python literal
    body = "".join(
        '\\"' if ch == '"' else _escape_char(ch) if _needs_escape(ch) else ch for ch in text
    )
    return f'"{body}"'


def py_docstring(text: str) -> str:
    """Return ``text`` escaped for the inside of a ``\"\"\"...\"\"\"`` docstring.

    The docstring reads back as exactly ``text``: backslashes and control characters
    are escaped, and so is every ``"`` next to another ``"`` or at the end (the only
    places a quote could close the string). Newlines are kept (a multi-line docstring).
    """
    if '"' not in text and "\\" not in text and text.replace("\n", "").isprintable():
        return text  # nothing to escape (most docstrings): no walk over every character
    out: list[str] = []
    last = len(text) - 1
    for i, ch in enumerate(text):
        if ch == '"':
            near = (i > 0 and text[i - 1] == '"') or (i < last and text[i + 1] == '"')
            out.append('\\"' if near or i == last else '"')
        elif ch != "\n" and _needs_escape(ch):
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def is_python_identifier(name: str) -> bool:
    """Return True for an ASCII identifier that is not a Python keyword."""
    return bool(ASCII_IDENTIFIER.fullmatch(name)) and not keyword.iskeyword(name)


def py_identifier(name: str, what: str = "name") -> str:
    """Return ``name`` if it can be written as a Python name; raise otherwise.

    Generated names are only ever built from names the compiler validated; this is the
    last check before one is written, so a slip is a compiler error, never code.
    """
    if not is_python_identifier(name):
        raise UnsafeTextError(f"{what} {name!r} is not a Python identifier")
    return name


def sql_identifier(name: str) -> str:
    """Return ``name`` as a double-quoted SQL identifier (``"`` doubled)."""
    if "\x00" in name:
        raise UnsafeTextError("an SQL identifier cannot hold a NUL character")
    return '"' + name.replace('"', '""') + '"'


def sql_string(value: str) -> str:
    """Return ``value`` as a single-quoted SQL string literal (``'`` doubled)."""
    if "\x00" in value:
        raise UnsafeTextError("an SQL string literal cannot hold a NUL character")
    return "'" + value.replace("'", "''") + "'"


def json_string(text: str) -> str:
    """Return ``text`` as a JSON string (control characters escaped, UTF-8 kept)."""
    return json.dumps(text, ensure_ascii=False)


def terminal_text(text: str) -> str:
    """Return ``text`` with control and format characters made visible (``\x1b``, ``\u202e``).

    File names and schema strings are echoed in diagnostics; raw, an escape sequence would
    drive the terminal, a newline would forge a diagnostic line and a bidirectional
    override (U+202E) would show the line's characters in another order.
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape_char(ch) for ch in text)

"""A small Python code builder whose output ``ruff format`` leaves as it is.

The Django backends write Python modules that users read, diff and lint. Rendering them
through a tiny expression tree (calls, literals, lists) instead of string templates keeps
every line under the project's 100-column limit and laid out the way ``ruff format``
(black) would lay it out: on one line when it fits, else the arguments on one indented line,
else one argument per line with a trailing comma. So running the formatter over generated
code changes nothing, and a regenerated file diffs cleanly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from .escaping import py_string

__all__ = [
    "LINE_LENGTH",
    "Call",
    "Dict",
    "Expr",
    "List",
    "Lit",
    "Raw",
    "Tuple",
    "assign",
    "expr_of",
    "lines_block",
    "py_literal",
    "py_str",
    "render",
    "sorted_all",
]

#: The project's line length (pyproject ``[tool.ruff] line-length``).
LINE_LENGTH = 100
_INDENT = "    "


def py_str(text: str) -> str:
    """Return ``text`` as a Python string literal (:func:`toolkit_codegen.escaping.py_string`)."""
    return py_string(text)


def py_literal(value: object) -> str:
    """Return a Python literal for a str, bool, int, float or None."""
    if type(value) is str:
        return _str_literal(value)
    if isinstance(value, str):  # a str subclass: not cached, it may format differently
        return py_str(value)
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"no literal for {type(value).__name__}")


@lru_cache(maxsize=8192)
def _str_literal(text: str) -> str:
    """Return :func:`py_str` of ``text``, remembered: field names and options recur a lot.

    Called with exact ``str`` values only (a cache key equates ``True`` with ``1``, and a
    ``str`` subclass with its plain value); the escaping itself is unchanged, so schema
    text still never becomes code.
    """
    return py_string(text)


class Expr:
    """A Python expression that knows how to render itself within a width."""

    def flat(self) -> str:
        """Return the one-line form (computed once: rendering asks for it at every level)."""
        cached = self.__dict__.get("_flat_text")
        if cached is None:
            cached = self.__dict__["_flat_text"] = self._flat()
        return cached

    def _flat(self) -> str:
        raise NotImplementedError

    def parts(self) -> tuple[str, str, list[tuple[str, Expr]], bool] | None:
        """Return ``(open, close, [(prefix, item)], magic_comma)`` for a splittable node."""
        return None

    def exploded(self) -> bool:
        """Return True when the node always splits one item per line (``parts()[3]``)."""
        return bool(getattr(self, "explode", False))


@dataclass(frozen=True)
class Raw(Expr):
    """Code written as is (a name, an attribute, an already-rendered literal)."""

    text: str

    def _flat(self) -> str:
        """Return the text."""
        return self.text


@dataclass(frozen=True)
class Lit(Expr):
    """A literal value (str, bool, int, float, None)."""

    value: object

    def _flat(self) -> str:
        """Return the literal."""
        return py_literal(self.value)


def _as_expr(value: object) -> Expr:
    """Return ``value`` as an expression: dicts, lists and tuples become containers."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, dict):
        return Dict([(str(k), v) for k, v in value.items()])
    if isinstance(value, list):
        return List(value)
    if isinstance(value, tuple):
        return Tuple(value)
    return Lit(value)


def _flat_of(value: object) -> str:
    """Return the one-line form of ``value``, as ``_as_expr(value).flat()`` without a ``Lit``.

    Containers render their plain items (strings, numbers) through here: most items are
    such values, and wrapping each in a throwaway ``Lit`` was a large part of the work.
    """
    if type(value) is str:  # the most common item: no more checks than needed
        return _str_literal(value)
    if isinstance(value, Expr):
        return value.flat()
    if isinstance(value, (dict, list, tuple)):
        return _as_expr(value).flat()
    return py_literal(value)


def expr_of(value: object) -> Expr:
    """Return the expression of a Python value (JSON-like data or an :class:`Expr`)."""
    return _as_expr(value)


@dataclass(frozen=True)
class Call(Expr):
    """``func(arg, ..., key=value, ...)``."""

    func: str
    args: Sequence[object] = ()
    kwargs: Sequence[tuple[str, object]] = ()
    #: Always one argument per line (a "magic trailing comma").
    explode: bool = False

    def _items(self) -> list[tuple[str, Expr]]:
        items = [("", _as_expr(a)) for a in self.args]
        items += [(f"{k}=", _as_expr(v)) for k, v in self.kwargs]
        return items

    def _flat(self) -> str:
        """Return ``func(...)`` on one line."""
        args = [_flat_of(a) for a in self.args]
        args += [f"{k}={_flat_of(v)}" for k, v in self.kwargs]
        return f"{self.func}({', '.join(args)})"

    def parts(self) -> tuple[str, str, list[tuple[str, Expr]], bool] | None:
        """Split between the parentheses."""
        items = self._items()
        return (f"{self.func}(", ")", items, self.explode) if items else None


@dataclass(frozen=True)
class List(Expr):
    """``[a, b]``."""

    items: Sequence[object] = field(default_factory=tuple)
    explode: bool = False

    def _flat(self) -> str:
        """Return ``[...]`` on one line."""
        return "[" + ", ".join([_flat_of(i) for i in self.items]) + "]"

    def parts(self) -> tuple[str, str, list[tuple[str, Expr]], bool] | None:
        """Split between the brackets."""
        items = [("", _as_expr(i)) for i in self.items]
        return ("[", "]", items, self.explode) if items else None


@dataclass(frozen=True)
class Tuple(Expr):
    """``(a, b)`` (and ``(a,)``)."""

    items: Sequence[object] = field(default_factory=tuple)
    explode: bool = False

    def _flat(self) -> str:
        """Return ``(...)`` on one line."""
        inner = ", ".join([_flat_of(i) for i in self.items])
        return f"({inner},)" if len(self.items) == 1 else f"({inner})"

    def exploded(self) -> bool:
        """Return True when exploded, as a one-item tuple always is (it keeps its comma)."""
        return self.explode or len(self.items) == 1

    def parts(self) -> tuple[str, str, list[tuple[str, Expr]], bool] | None:
        """Split between the parentheses (a one-item tuple always keeps its comma)."""
        items = [("", _as_expr(i)) for i in self.items]
        if not items:
            return None
        return ("(", ")", items, self.explode or len(items) == 1)


@dataclass(frozen=True)
class Dict(Expr):
    """``{key: value}`` with string keys."""

    pairs: Sequence[tuple[str, object]] = field(default_factory=tuple)
    explode: bool = False

    def _flat(self) -> str:
        """Return ``{...}`` on one line."""
        return "{" + ", ".join([f"{py_str(k)}: {_flat_of(v)}" for k, v in self.pairs]) + "}"

    def parts(self) -> tuple[str, str, list[tuple[str, Expr]], bool] | None:
        """Split between the braces."""
        items = [(f"{py_str(k)}: ", _as_expr(v)) for k, v in self.pairs]
        return ("{", "}", items, self.explode) if items else None


def render(expr: Expr, indent: int = 0, lead: int = 0, trail: int = 0) -> str:
    """Render ``expr`` starting ``lead`` columns after ``indent`` levels of indentation.

    ``trail`` is how many characters follow the expression on its last line (a comma).
    The first line is returned without its indentation; later lines carry theirs.
    """
    # Most nodes fit on their line: that is decided on the one-line form before the node
    # is split into parts; an exploded node is one item per line whatever its width, so
    # its one-line form (for an operations list, the whole file on one line) is never built.
    # A leaf (a name, a literal) cannot split: its one-line form is its only form.
    kind = type(expr)
    if kind is Lit or kind is Raw:
        return expr.flat()
    explode = expr.exploded()
    if not explode:
        one_line = expr.flat()
        if len(one_line) <= LINE_LENGTH - len(_INDENT) * indent - lead - trail:
            return one_line
    parts = expr.parts()
    if parts is None:
        return expr.flat()
    opener, closer, items, explode = parts
    inner_pad = _INDENT * (indent + 1)
    # black splits a collection literal of several items one per line; calls and
    # one-item collections first try all their items on one indented line.
    if not explode and (isinstance(expr, Call) or len(items) == 1):
        joined = ", ".join(prefix + item.flat() for prefix, item in items)
        if len(inner_pad) + len(joined) <= LINE_LENGTH:
            # black's "hug": all arguments on one indented line, no trailing comma.
            return f"{opener}\n{inner_pad}{joined}\n{_INDENT * indent}{closer}"
    lines = [opener]
    for prefix, item in items:
        text = render(item, indent + 1, len(prefix), 1)
        lines.append(_noqa(f"{inner_pad}{prefix}{text},"))
    lines.append(f"{_INDENT * indent}{closer}")
    return "\n".join(lines)


def _noqa(line: str) -> str:
    """Mark a line no formatter can shorten (a long string literal) for the linter."""
    if len(line) > LINE_LENGTH and "\n" not in line:
        return f"{line}  # noqa: E501"
    return line


def assign(name: str, expr: Expr, indent: int = 0) -> str:
    """Return ``name = expr`` indented ``indent`` levels, formatted to fit."""
    pad = _INDENT * indent
    return _noqa(f"{pad}{name} = {render(expr, indent, len(name) + 3)}")


def sorted_all(names: Iterable[str]) -> list[str]:
    """Return names in ``__all__`` order as ruff's RUF022 wants (CONSTANTS, Classes, rest)."""

    def key(name: str) -> tuple[int, str]:
        if name.isupper():
            return (0, name)
        return (1, name) if name[:1].isupper() else (2, name)

    return sorted(set(names), key=key)


def lines_block(lines: Iterable[str], indent: int) -> str:
    """Return ``lines`` joined, each prefixed by ``indent`` levels."""
    pad = _INDENT * indent
    return "\n".join(f"{pad}{line}" if line else "" for line in lines)

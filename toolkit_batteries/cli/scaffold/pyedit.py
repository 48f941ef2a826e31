"""Small, exact edits of Python source: insert into a list or dict literal, add an import.

Edits are located with :mod:`ast` (so comments, strings and odd formatting cannot fool a
regular expression) and applied to the original text, so everything the user wrote stays
byte-for-byte as it was. A container that spans several lines gets new lines before its
closing bracket (after a given element when asked); a one-line container is rewritten
one item per line. Callers re-parse after each edit and check the result still parses.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ..output import InvalidInputError

__all__ = [
    "Source",
    "ensure_from_import",
    "find_assign",
    "insert_lines",
    "parse_python",
    "top_level_names",
]

_INDENT = "    "


class Source:
    """Source text with ``ast`` positions (1-based lines, UTF-8 byte columns) as offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts: list[int] = []
        total = 0
        for line in self.lines:
            self.starts.append(total)
            total += len(line)
        self.starts.append(total)

    def offset(self, lineno: int, col: int) -> int:
        """Return the text offset of ``(lineno, byte column)``."""
        if lineno > len(self.lines):
            return len(self.text)
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))

    def start(self, node: ast.AST) -> int:
        """Return the offset where ``node`` starts."""
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        """Return the offset just after ``node``."""
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        """Return the source of ``node``."""
        return self.text[self.start(node) : self.end(node)]

    def indent_of(self, lineno: int) -> str:
        """Return the leading whitespace of line ``lineno``."""
        line = self.lines[lineno - 1] if lineno <= len(self.lines) else ""
        return line[: len(line) - len(line.lstrip(" \t"))]


def parse_python(text: str, shown: str) -> ast.Module:
    """Parse ``text``; a syntax error is exit 3 (nothing can be placed in a broken file)."""
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise InvalidInputError(
            f"{shown}:{exc.lineno or 1}:{exc.offset or 1}: invalid Python ({exc.msg}); "
            "fix it first, nothing was written"
        ) from None


def find_assign(tree: ast.Module, name: str) -> ast.expr | None:
    """Return the value of the last top-level ``name = ...`` (or annotated) assignment."""
    found: ast.expr | None = None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        ) or (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
            and node.value is not None
        ):
            found = node.value
    return found


def top_level_names(tree: ast.Module) -> set[str]:
    """Return every name a module defines at top level (functions, classes, assignments)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _elements(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Dict):
        return list(node.values)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return list(node.elts)
    raise TypeError(f"not a container literal: {type(node).__name__}")


def _items_source(src: Source, node: ast.expr) -> list[str]:
    if isinstance(node, ast.Dict):
        return [
            f"**{src.segment(v)}" if k is None else f"{src.segment(k)}: {src.segment(v)}"
            for k, v in zip(node.keys, node.values, strict=True)
        ]
    return [src.segment(e) for e in _elements(node)]


def _comma_after(src: Source, position: int, stop: int) -> bool:
    """Return whether the first code character in ``text[position:stop]`` is a comma."""
    index = position
    text = src.text
    while index < stop:
        char = text[index]
        if char == "#":
            newline = text.find("\n", index, stop)
            if newline < 0:
                return False
            index = newline + 1
        elif char.isspace():
            index += 1
        else:
            return char == ","
    return False


def insert_lines(
    text: str, node: ast.expr, lines: Sequence[str], *, after: ast.expr | None = None
) -> str:
    """Return ``text`` with ``lines`` added inside the container literal ``node``.

    ``lines`` are complete source lines without indentation (items with their trailing
    comma, or comments); they are indented like the container's items.
    """
    src = Source(text)
    elements = _elements(node)
    close = src.end(node) - 1
    close_line = node.end_lineno or node.lineno
    # New lines go before a closing bracket that stands alone on its line; anything else
    # (a one-line literal, a bracket after the last item) is rewritten one item per line.
    closing_alone = (
        close_line != node.lineno and not src.text[src.starts[close_line - 1] : close].strip()
    )
    if not closing_alone:
        return _rewrite_one_per_line(src, node, lines)
    base = src.indent_of(close_line)
    first = elements[0] if elements else None
    if first is not None and first.lineno != node.lineno:
        pad = src.indent_of(_item_start_line(node, 0))
    else:
        pad = base + _INDENT
    edits: list[tuple[int, int, str]] = []
    if elements and not _comma_after(src, src.end(elements[-1]), close):
        edits.append((src.end(elements[-1]), src.end(elements[-1]), ","))
    block = "".join(f"{pad}{line}\n" if line else "\n" for line in lines)
    where = src.starts[close_line - 1]
    if after is not None and after.end_lineno is not None:
        rest_start = src.end(after)
        line_end = src.starts[after.end_lineno]
        rest = src.text[rest_start:line_end].strip()
        # After that element only when its line holds nothing else (its comma, a comment).
        if rest == "," or (rest.startswith(",") and rest[1:].strip().startswith("#")):
            where = line_end
    edits.append((where, where, block))
    return _apply(src.text, edits)


def _item_start_line(node: ast.expr, index: int) -> int:
    if isinstance(node, ast.Dict):
        key = node.keys[index]
        return (key or node.values[index]).lineno
    return _elements(node)[index].lineno


def _rewrite_one_per_line(src: Source, node: ast.expr, lines: Sequence[str]) -> str:
    opener, closer = {
        ast.Dict: ("{", "}"),
        ast.List: ("[", "]"),
        ast.Tuple: ("(", ")"),
        ast.Set: ("{", "}"),
    }[type(node)]
    base = src.indent_of(node.lineno)
    pad = base + _INDENT
    body = "".join(f"{pad}{item},\n" for item in _items_source(src, node))
    body += "".join(f"{pad}{line}\n" if line else "\n" for line in lines)
    new = f"{opener}\n{body}{base}{closer}"
    return _apply(src.text, [(src.start(node), src.end(node), new)])


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def ensure_from_import(text: str, module: str, name: str, *, level: int = 0) -> str:
    """Return ``text`` importing ``name`` from ``module`` (merged into an existing import).

    An existing ``from module import ...`` gains the name (names kept sorted as ruff sorts
    them); otherwise a new line goes after the last top-level import, or after the module
    docstring and ``from __future__`` imports.
    """
    tree = ast.parse(text)
    src = Source(text)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == module and node.level == level:
            names = [(a.name, a.asname) for a in node.names]
            if any((asname or imported) == name for imported, asname in names):
                return text
            if any(imported == "*" for imported, _ in names):
                return text
            names.append((name, None))
            line = _from_import(module, names, level, src.indent_of(node.lineno))
            return _apply(text, [(src.start(node), src.end(node), line)])
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    new = _from_import(module, [(name, None)], level, "")
    if imports:
        last = imports[-1]
        at = src.starts[last.end_lineno or last.lineno]
        # A relative import starts its own block after absolute ones (ruff's isort).
        gap = "\n" if level and not (isinstance(last, ast.ImportFrom) and last.level) else ""
        return _apply(text, [(at, at, f"{gap}{new}\n")])
    at = 0
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        at = src.starts[body[0].end_lineno or 1]
    return _apply(text, [(at, at, f"\n{new}\n" if at else f"{new}\n\n")])


def _member_key(name: str) -> tuple[int, str]:
    """Order names as ruff's isort does by default: CONSTANTS, Classes, then the rest."""
    if len(name) > 1 and name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def _from_import(module: str, names: list[tuple[str, str | None]], level: int, pad: str) -> str:
    ordered = sorted(names, key=lambda item: _member_key(item[0]))
    parts = [f"{n} as {a}" if a else n for n, a in ordered]
    head = f"{pad}from {'.' * level}{module} import "
    line = head + ", ".join(parts)
    if len(line) <= 100:
        return line
    inner = "".join(f"{pad}{_INDENT}{part},\n" for part in parts)
    return f"{head}(\n{inner}{pad})"

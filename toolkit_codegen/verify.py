"""The last gate before a generated file is written: it must load.

Every generated ``.py`` file is compiled to bytecode (never run), every ``.json`` file
decoded and every SQLite statement prepared (executed against a fresh in-memory
database) before the caller writes anything. Escaping (:mod:`.escaping`) is what keeps
schema text out of code; this gate is what makes a slip in a backend a reported compiler
bug instead of a file that runs someone's text. A failure names the generated file and
line, and the schema declaration whose text sits on that line.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from collections.abc import Iterator, Mapping

from .nodes import Diagnostic, Position, Schema

__all__ = ["file_problem", "verify_files"]

_PLAIN = re.compile(r"[^\"'\\\x00-\x1f\x7f-\x9f]*")


def file_problem(relative: str, text: str) -> tuple[int, str] | None:
    """Return ``(line, reason)`` when the file of that name does not load, else None."""
    if relative.endswith(".py"):
        try:
            # A full compile (never run): parsing alone accepts what the symbol table
            # refuses, such as ``def get(self, request, *, request)``.
            compile(text, relative, "exec", dont_inherit=True)
        except SyntaxError as exc:
            return exc.lineno or 1, f"invalid Python: {exc.msg}"
        except ValueError as exc:  # a NUL byte
            return 1, f"invalid Python: {exc}"
    elif relative.endswith(".json"):
        try:
            json.loads(text)
        except ValueError as exc:
            return getattr(exc, "lineno", 1), "invalid JSON"
    elif relative.endswith(".sql"):
        if "\x00" in text:
            return text[: text.index("\x00")].count("\n") + 1, "a NUL character in SQL"
        if "sqlite" in relative.split("/"):
            return _sqlite_problem(text)
    return None


def _sqlite_problem(script: str) -> tuple[int, str] | None:
    """Run each statement in a fresh in-memory SQLite database; return the first failure."""
    connection = sqlite3.connect(":memory:")
    try:
        statement: list[str] = []
        first_line = 1
        for number, line in enumerate(script.splitlines(keepends=True), 1):
            if not statement:
                first_line = number
            statement.append(line)
            text = "".join(statement)
            if not sqlite3.complete_statement(text):
                continue
            statement = []
            try:
                connection.execute(text)
            except sqlite3.Error as exc:
                return first_line, f"SQLite refuses the statement: {exc}"
        rest = "".join(statement).strip()
        if rest and not all(row.lstrip().startswith("--") for row in rest.splitlines()):
            return first_line, "an unterminated SQL statement"
    finally:
        connection.close()
    return None


def verify_files(files: Mapping[str, str], schema: Schema, phase: str) -> list[Diagnostic]:
    """Return one compiler-bug diagnostic per generated file that does not load."""
    problems = []
    for relative, text in sorted(files.items()):
        found = file_problem(relative, text)
        if found is None:
            continue
        line, reason = found
        rows = text.splitlines()
        shown = rows[line - 1] if 0 < line <= len(rows) else ""
        problems.append(
            Diagnostic(
                _blame(schema, shown),
                phase,
                f"compiler bug: generated {relative} does not load ({reason} at line {line}); "
                "nothing was written, please report this schema",
            )
        )
    return problems


def _nodes(value: object) -> Iterator[object]:
    """Yield every node of the tree that carries a position."""
    if isinstance(value, tuple | list):
        for item in value:
            yield from _nodes(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type | Position):
        if hasattr(value, "pos"):
            yield value
        for f in dataclasses.fields(value):
            yield from _nodes(getattr(value, f.name))


def _blame(schema: Schema, line: str) -> Position:
    """Return the position of the declaration whose longest text appears on ``line``."""
    best: tuple[int, Position] | None = None
    for node in _nodes(schema.modules):
        pos = node.pos  # type: ignore[attr-defined]
        for f in dataclasses.fields(node):  # type: ignore[arg-type]
            value = getattr(node, f.name)
            if not isinstance(value, str):
                continue
            # Escaped text differs from the schema's from its first special character on.
            plain = _PLAIN.match(value).group()  # type: ignore[union-attr]
            for text in (value, plain):
                if len(text) >= 2 and text in line and (best is None or len(text) > best[0]):
                    best = (len(text), pos)
    if best is not None:
        return best[1]
    files = [f for m in schema.modules for f in m.files]
    return Position(files[0].path if files else "<schema>", 1, 1)

"""Canonical formatting of schema text (the ``fmt`` command), gofmt-style.

The formatter prints the parsed tree back in one canonical layout and keeps every comment:

- two-space indentation, one field, relation, index or rpc option per line;
- attributes in a fixed order (``@primary @unique @default @validate @renamed_from``),
  ``@validate`` rules in a fixed order, rpc options as ``http``, ``auth``, ``permission``,
  ``paginated``, ``errors``; job options as ``queue``, ``retry``; schedule options as
  ``cron``, ``dispatch``; step options as ``execute``, ``compensate``, ``pivot``; ``;``
  separators become line breaks;
- one blank line between top-level declarations; inside blocks a blank line is kept where
  the source had one (runs of blank lines collapse to one);
- a comment stays attached to the line it was on (a trailing comment) or to the line that
  follows it (a standalone comment), so doc comments remain doc comments;
- spellings with one meaning are canonicalised: ``datetime`` prints as ``timestamp``,
  ``paginated: false``, ``pivot: false`` and ``@on_delete(restrict)`` (the defaults) are
  dropped.

It refuses text that does not parse, raising :class:`FormatError` with the diagnostics,
because printing a partial tree would delete the user's code. Formatting is idempotent:
``format_source(format_source(x)) == format_source(x)``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from .grammar import Comment, ParsedFile, parse_file, sort_diagnostics
from .nodes import (
    Auth,
    Default,
    Diagnostic,
    Entity,
    Enum,
    Field,
    Index,
    Job,
    JobCall,
    Message,
    Param,
    Permission,
    Position,
    Relation,
    Retry,
    Rpc,
    Saga,
    Schedule,
    Service,
    TypeRef,
    Validation,
)

__all__ = ["FormatError", "format_source", "is_formatted"]

INDENT = "  "
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class FormatError(ValueError):
    """The text does not parse, so it cannot be formatted; ``diagnostics`` says why."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(sort_diagnostics(diagnostics))
        super().__init__("\n".join(str(d) for d in self.diagnostics))


def format_source(text: str, path: str = "<input>") -> str:
    """Return the canonical formatting of one schema file's text.

    Raises :class:`FormatError` when the text has syntax errors (or attributes the
    formatter could not print back faithfully).
    """
    parsed = parse_file(text, path)
    errors = [d for d in parsed.diagnostics if d.severity == "error"]
    if errors:
        raise FormatError(errors)
    return _Printer(parsed).render()


def is_formatted(text: str, path: str = "<input>") -> bool:
    """Return True when ``text`` is already canonical (raises :class:`FormatError`)."""
    return format_source(text, path) == text


# --------------------------------------------------------------------------- rendering


def quote(value: str) -> str:
    """Return ``value`` as a schema string literal."""
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    )
    return f'"{escaped}"'


def number(value: int | float) -> str:
    """Return a number as the grammar reads it (no exponent, a digit each side of a dot)."""
    if isinstance(value, int):
        return str(value)
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
        if "." not in text:
            text += ".0"
    return text


def literal(value: object) -> str:
    """Return a default's literal value as source text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number(value)
    return quote(str(value))


def name_arg(value: str) -> str:
    """Return a name argument bare when the grammar reads it back as a name."""
    return value if _IDENT.match(value) and value not in ("true", "false") else quote(value)


def type_text(ref: TypeRef) -> str:
    """Return ``type[?]`` (inline enums as ``enum(a, b)``)."""
    base = f"enum({', '.join(ref.enum_values)})" if ref.name == "enum" else ref.name
    if ref.is_list:
        base = f"[{base}]"
    return base + ("?" if ref.optional else "")


def validation_text(v: Validation) -> str:
    """Return ``@validate(...)`` with the rules in canonical order."""
    rules = []
    for rule in ("min_len", "max_len", "format", "gt", "gte", "lt", "lte"):
        value = getattr(v, rule)
        if value is not None:
            rules.append(f"{rule}: {quote(value) if rule == 'format' else number(value)}")
    return f"@validate({', '.join(rules)})"


def default_text(d: Default) -> str:
    """Return ``@default(...)``."""
    if d.kind == "now":
        return "@default(now())"
    if d.kind == "enum":
        return f"@default({d.value})"
    return f"@default({literal(d.value)})"


def field_text(f: Field) -> str:
    """Return one field line (without indentation)."""
    parts = [f"{f.name}: {type_text(f.type)}"]
    if f.primary:
        parts.append("@primary")
    if f.unique:
        parts.append("@unique")
    if f.default is not None:
        parts.append(default_text(f.default))
    if f.validation is not None:
        parts.append(validation_text(f.validation))
    if f.renamed_from is not None:
        parts.append(f"@renamed_from({quote(f.renamed_from)})")
    return " ".join(parts)


def relation_text(r: Relation) -> str:
    """Return one relation line."""
    parts = [f"{r.kind} {r.name}: {r.target}"]
    if r.join_table is not None:
        parts.append(f"{{ join_table: {r.join_table} }}")
    if r.foreign_key is not None:
        parts.append(f"@foreign_key({name_arg(r.foreign_key)})")
    if r.on_delete != "restrict":
        parts.append(f"@on_delete({name_arg(r.on_delete)})")
    return " ".join(parts)


def index_text(i: Index) -> str:
    """Return one index line."""
    return f"index({', '.join(i.columns)})" + (" @unique" if i.unique else "")


def param_text(p: Param) -> str:
    """Return one rpc parameter."""
    text = f"{p.name}: {type_text(p.type)}"
    return text + (f" {validation_text(p.validation)}" if p.validation is not None else "")


def auth_text(a: Auth) -> str:
    """Return the value of ``auth:``."""
    if not a.required:
        return "none"
    return f"required(roles: {{{', '.join(a.roles)}}})" if a.roles else "required"


def permission_text(p: Permission) -> str:
    """Return the value of ``permission:``."""
    if not p.check:
        return "none"
    args = [quote(p.action or "")]
    if p.resource is not None:
        args.append(f"resource: {p.resource}")
    if p.owner_field is not None:
        args.append(f"owner_field: {p.owner_field}")
    return f"check({', '.join(args)})"


def retry_text(r: Retry) -> str:
    """Return the value of ``retry:`` (``max_attempts`` first)."""
    parts = []
    if r.max_attempts is not None:
        parts.append(f"max_attempts({r.max_attempts})")
    if r.backoff is not None:
        base = f", base: {r.backoff_base_text}" if r.backoff_base_text is not None else ""
        parts.append(f"backoff({r.backoff}{base})")
    return ", ".join(parts)


def job_call_text(call: JobCall) -> str:
    """Return ``Job(args)`` of ``dispatch:``."""
    bare = call.arg_bare or (False,) * len(call.args)
    args = [str(v) if is_bare else literal(v) for v, is_bare in zip(call.args, bare, strict=False)]
    return f"{call.job}({', '.join(args)})"


# --------------------------------------------------------------------------- layout


@dataclass
class _Item:
    """One printed line and the source line it stands for (comments attach to it)."""

    indent: int
    text: str | None  # None: the end-of-file anchor, which prints only its comments
    anchor: int
    kind: str = "member"  # "top" (first line of a declaration), "member", "close", "eof"
    first_in_block: bool = False
    leading: list[Comment] = field(default_factory=list)
    trailing: list[str] = field(default_factory=list)


class _Printer:
    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self.lines = parsed.text.split("\n")
        self.items: list[_Item] = []
        comment_lines = [c.line for c in parsed.comments]
        self.comment_lines = comment_lines

    # -- building items

    def add(self, indent: int, text: str | None, anchor: int, kind: str = "member") -> None:
        first = (
            bool(self.items)
            and self.items[-1].text is not None
            and (self.items[-1].text.endswith("{") and self.items[-1].indent == indent - 1)
        )
        self.items.append(_Item(indent, text, anchor, kind, first))

    def end_line(self, pos: Position, fallback: int) -> int:
        end = self.parsed.ends.get(pos)
        return end.line if end is not None else fallback

    def has_comment_inside(self, start: int, end: int) -> bool:
        lines = self.comment_lines
        i = bisect.bisect_right(lines, start)
        return i < len(lines) and lines[i] < end

    def build(self) -> None:
        src = self.parsed.source
        decls: list[Entity | Message | Enum | Service | Job | Schedule | Saga] = sorted(
            (
                *src.entities,
                *src.messages,
                *src.enums,
                *src.services,
                *src.jobs,
                *src.schedules,
                *src.sagas,
            ),
            key=lambda d: d.pos,
        )
        for decl in decls:
            if isinstance(decl, Entity):
                header = f"entity {decl.name}"
                if decl.db_schema is not None:
                    header += f" @schema({name_arg(decl.db_schema)})"
                members: list[tuple[Position, str]] = sorted(
                    [(f.pos, field_text(f)) for f in decl.fields]
                    + [(r.pos, relation_text(r)) for r in decl.relations]
                    + [(i.pos, index_text(i)) for i in decl.indexes]
                )
                self.block(header, decl.pos, members)
            elif isinstance(decl, Message):
                self.block(
                    f"message {decl.name}", decl.pos, [(f.pos, field_text(f)) for f in decl.fields]
                )
            elif isinstance(decl, Enum):
                self.enum(decl)
            elif isinstance(decl, Job):
                self.job(decl)
            elif isinstance(decl, Schedule):
                self.options_block(
                    f"schedule {decl.name}",
                    decl.pos,
                    [
                        ("cron", f"cron: {quote(decl.cron)}" if decl.cron is not None else None),
                        (
                            "dispatch",
                            f"dispatch: {job_call_text(decl.dispatch)}" if decl.dispatch else None,
                        ),
                    ],
                    0,
                )
            elif isinstance(decl, Saga):
                self.saga(decl)
            else:
                self.service(decl)
        self.items.append(_Item(0, None, len(self.lines) + 1, "eof"))

    def block(self, header: str, pos: Position, members: list[tuple[Position, str]]) -> None:
        self.add(0, header + " {", pos.line, "top")
        for mpos, text in members:
            self.add(1, text, mpos.line)
        self.add(0, "}", self.end_line(pos, pos.line), "close")

    def enum(self, decl: Enum) -> None:
        end = self.end_line(decl.pos, decl.pos.line)
        if not self.has_comment_inside(decl.pos.line, end) or not decl.values:
            body = f" {', '.join(decl.values)} " if decl.values else ""
            self.add(0, f"enum {decl.name} {{{body}}}", decl.pos.line, "top")
            return
        # Comments between the values: one value per line keeps each comment in place.
        positions = self.parsed.value_pos.get(decl.pos, ())
        self.add(0, f"enum {decl.name} {{", decl.pos.line, "top")
        for i, value in enumerate(decl.values):
            line = positions[i].line if i < len(positions) else decl.pos.line
            self.add(1, value + ",", line)
        self.add(0, "}", end, "close")

    def options_block(
        self, header: str, pos: Position, options: list[tuple[str, str | None]], indent: int
    ) -> None:
        """Print ``header {`` then one ``label: value`` line per option, then ``}``."""
        labels = self.parsed.option_pos.get(pos, {})
        kind = "top" if indent == 0 else "member"
        self.add(indent, header + " {", pos.line, kind)
        for label, text in options:
            if text is None:
                continue
            where = labels.get(label)
            self.add(indent + 1, text, where.line if where is not None else pos.line)
        self.add(indent, "}", self.end_line(pos, pos.line), "close")

    def job(self, decl: Job) -> None:
        header = f"job {decl.name}({', '.join(param_text(p) for p in decl.params)})"
        options = [
            ("queue", f"queue: {decl.queue}" if decl.queue is not None else None),
            ("retry", f"retry: {retry_text(decl.retry)}" if decl.retry is not None else None),
        ]
        if all(text is None for _, text in options) and decl.pos not in self.parsed.ends:
            self.add(0, header, decl.pos.line, "top")
            return
        self.options_block(header, decl.pos, options, 0)

    def saga(self, decl: Saga) -> None:
        self.add(0, f"saga {decl.name} {{", decl.pos.line, "top")
        for step in decl.steps:
            self.options_block(
                f"step {step.name}",
                step.pos,
                [
                    ("execute", f"execute: {step.execute}" if step.execute else None),
                    ("compensate", f"compensate: {step.compensate}" if step.compensate else None),
                    ("pivot", "pivot: true" if step.pivot else None),
                ],
                1,
            )
        self.add(0, "}", self.end_line(decl.pos, decl.pos.line), "close")

    def service(self, decl: Service) -> None:
        self.add(0, f"service {decl.name} {{", decl.pos.line, "top")
        for rpc in decl.rpcs:
            self.rpc(rpc)
        self.add(0, "}", self.end_line(decl.pos, decl.pos.line), "close")

    def rpc(self, rpc: Rpc) -> None:
        params = ", ".join(param_text(p) for p in rpc.params)
        header = f"rpc {rpc.name}({params}) -> {rpc.returns.name}"
        labels = self.parsed.option_pos.get(rpc.pos, {})
        options: list[tuple[str, str]] = []
        if rpc.http is not None:
            options.append(("http", f"http: {rpc.http.method} {quote(rpc.http.path)}"))
        if rpc.auth is not None:
            options.append(("auth", f"auth: {auth_text(rpc.auth)}"))
        if rpc.permission is not None:
            options.append(("permission", f"permission: {permission_text(rpc.permission)}"))
        if rpc.paginated:
            options.append(("paginated", "paginated: true"))
        if rpc.errors:
            items = ", ".join(
                e.code + (f"({quote(e.message)})" if e.message is not None else "")
                for e in rpc.errors
            )
            options.append(("errors", f"errors: {{ {items} }}"))
        if not options:
            self.add(1, header, rpc.pos.line)
            return
        self.add(1, header + " {", rpc.pos.line)
        for label, text in options:
            where = labels.get(label)
            self.add(2, text, where.line if where is not None else rpc.pos.line)
        self.add(1, "}", self.end_line(rpc.pos, rpc.pos.line), "close")

    # -- comments

    def attach(self) -> None:
        keyed = sorted((item.anchor, i) for i, item in enumerate(self.items))
        anchors = [a for a, _ in keyed]
        for c in self.parsed.comments:
            if c.standalone:
                k = bisect.bisect_right(anchors, c.line)
                target = self.items[keyed[k][1]] if k < len(keyed) else self.items[-1]
                target.leading.append(c)
            else:
                k = bisect.bisect_right(anchors, c.line) - 1
                if k < 0:
                    self.items[keyed[0][1]].leading.append(c)
                else:
                    self.items[keyed[k][1]].trailing.append(c.text)

    def blank_before(self, line: int) -> bool:
        index = line - 2
        return 0 <= index < len(self.lines) and not self.lines[index].strip()

    def render(self) -> str:
        self.build()
        self.attach()
        out: list[str] = []
        previous = 0  # source line of the last printed unit
        for item in self.items:
            comment_indent = item.indent + 1 if item.kind == "close" else item.indent
            units: list[tuple[int, int, str]] = [
                (c.line, comment_indent, c.text) for c in item.leading
            ]
            if item.text is not None:
                text = item.text + "".join(" " + t for t in item.trailing)
                units.append((item.anchor, item.indent, text))
            for k, (line, indent, text) in enumerate(units):
                is_code = item.text is not None and k == len(units) - 1
                if not out:
                    blank = False
                elif k == 0 and item.kind == "top":
                    blank = True
                elif (k == 0 and item.first_in_block) or (is_code and item.kind == "close"):
                    blank = False
                else:
                    blank = previous < line - 1 and self.blank_before(line)
                if blank and out[-1] != "":
                    out.append("")
                out.append((INDENT * indent + text).rstrip())
                previous = line
        while out and out[-1] == "":
            out.pop()
        return "\n".join(out) + "\n" if out else ""

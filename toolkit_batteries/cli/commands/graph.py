"""``toolkit graph``: draw the schema, as Mermaid text, an SVG picture or a PNG.

Mermaid needs nothing (paste it into Markdown); SVG is drawn by a small pure-Python
layered layout (:mod:`toolkit_batteries.cli.graphing.svg`); PNG rasterises that SVG with
``cairosvg`` (the ``graph`` extra). A schema with errors still prints its Mermaid or SVG
on stdout, best effort, and then fails (exit 3); nothing is written to ``--out`` then.
"""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path
from typing import Any

from toolkit_batteries.cli.output import InvalidInputError, Output, Result, UsageError
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.paths import inside
from toolkit_batteries.cli.schema_files import add_schema_arguments, fail_on_errors, load_schema
from toolkit_batteries.core.files import atomic_write

DESCRIPTION = """\
Draw the schema's entities, relations and modules.

  mermaid  one fenced `graph TD` block per module (entities, relation edges such as
           `User -->|has_many| Order`), then a `graph LR` of modules with an `rpc` edge
           where a module's rpc returns or takes another module's type
  svg      a layered drawing of every entity (fields, PK/FK/UQ) and relation, tinted
           per module
  png      the svg, rasterised (needs the graph extra: pip install 'django-toolkit[graph]')

Without --format the format follows the --out suffix (.svg, .png), else mermaid.
Mermaid and svg go to stdout unless --out is given; png needs --out.
"""
EPILOG = """\
examples:
  toolkit graph > schema.md
  toolkit graph --format svg --out docs/schema.svg
  toolkit graph --out schema.png schema/
"""

FORMATS = ("mermaid", "svg", "png")
_BY_SUFFIX = {".svg": "svg", ".png": "png"}


def configure(parser: CommandParser) -> None:
    """Add ``--format``, ``--out`` and the schema paths."""
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="output format (default: from the --out suffix, else mermaid)",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="write to FILE instead of stdout (required for png)",
    )
    add_schema_arguments(parser)


def _target(raw: str) -> Path:
    path = Path(raw)
    target = inside(path.parent, path.name)
    if target.is_dir():
        raise InvalidInputError(f"--out {raw!r} is a directory; name a file")
    return target


def run(args: Namespace, out: Output) -> Result:
    """Render the chosen format; print it or write it to ``--out``."""
    fmt = args.format or (_BY_SUFFIX.get(Path(args.out).suffix.lower()) if args.out else None)
    fmt = fmt or "mermaid"
    if fmt == "png" and not args.out:
        raise UsageError("--format png needs --out FILE (a PNG is not printed to a terminal)")
    target = _target(args.out) if args.out else None
    result = load_schema(args.files, out, strict=False)
    schema = result.schema
    if fmt == "mermaid":
        from toolkit_batteries.cli.graphing.mermaid import render

        text = render(schema)
    else:
        from toolkit_batteries.cli.graphing.svg import render

        text = render(schema)
    data: dict[str, Any] = {
        "format": fmt,
        "modules": len(schema.modules),
        "entities": len(schema.entities),
        "relations": sum(len(e.relations) for e in schema.entities),
    }
    if not result.ok:
        if target is None and fmt != "png":
            out.line(text.rstrip("\n"))
        fail_on_errors(result.diagnostics, **data)
    if fmt == "png":
        from toolkit_batteries.cli.graphing.png import svg_to_png

        payload = svg_to_png(text)
    else:
        payload = text.encode("utf-8")
    if target is None:
        out.line(text.rstrip("\n"))
        if out.json_mode:
            data["text"] = text
        return Result(data=data)
    atomic_write(target, payload)
    data["out"] = str(args.out)
    data["bytes"] = len(payload)
    out.line(f"✔ wrote {args.out} ({fmt}, {len(payload)} bytes)")
    return Result(data=data)

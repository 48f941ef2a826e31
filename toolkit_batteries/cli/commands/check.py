"""``toolkit check``: validate schema files (parse and resolve every name); write nothing.

The fast gate before ``compile``: it runs the compiler's front end only, no backend, so it
costs a parse of the schema and reports every diagnostic at once.
"""

from __future__ import annotations

from argparse import Namespace

from toolkit_batteries.cli.output import Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.schema_files import add_schema_arguments, load_schema

DESCRIPTION = """\
Validate schema files: parse them and resolve every name and rule, run no backend and
write nothing. Diagnostics go to stderr as `file:line:col: [phase] message`.

With no PATH, the project's schema/ directory (else ./schema) is searched recursively.
"""
EPILOG = """\
examples:
  toolkit check
  toolkit check schema/app.toolkit
  toolkit --json check schema/
"""
BREADCRUMBS = ["toolkit compile", "toolkit fmt"]


def configure(parser: CommandParser) -> None:
    """Add the schema paths."""
    add_schema_arguments(parser)


def run(args: Namespace, out: Output) -> Result:
    """Load and validate; exit 3 with diagnostics on any error."""
    result = load_schema(args.files, out)
    schema = result.schema
    rpcs = sum(len(service.rpcs) for service in schema.services)
    files = len(result.paths)
    out.line(f"✔ {files} file(s) valid")
    return Result(
        data={
            "valid": True,
            "files": files,
            "modules": len(schema.modules),
            "entities": len(schema.entities),
            "messages": len(schema.messages),
            "enums": len(schema.enums),
            "services": len(schema.services),
            "rpcs": rpcs,
            "warnings": len(result.warnings),
        }
    )

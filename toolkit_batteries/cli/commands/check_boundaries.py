"""``toolkit check-boundaries``: report references that cross schema modules.

The rules are :mod:`toolkit_codegen.boundaries` (the original toolkit's): relations,
rpc return types and permission resources stay inside their module; sagas may call
rpcs of any module. The schema must first be valid (``toolkit check``).
"""

from __future__ import annotations

from argparse import Namespace

from toolkit_batteries.cli.output import InvalidInputError, Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.schema_files import (
    add_schema_arguments,
    diagnostic_data,
    load_schema,
    report,
)

DESCRIPTION = """\
Report references that cross schema modules: a relation to an entity of another module,
an rpc returning a type of another module, a permission resource of another module.
Sagas may name rpcs of any module. Diagnostics go to stderr as
`file:line:col: [boundaries] message`; any crossing fails with exit 3.

With no PATH, the project's schema/ directory (else ./schema) is searched recursively.
"""
EPILOG = """\
examples:
  toolkit check-boundaries
  toolkit check:boundaries schema/
  toolkit --json check-boundaries
"""
BREADCRUMBS = ["toolkit check", "toolkit graph", "toolkit extract"]


def configure(parser: CommandParser) -> None:
    """Add the schema paths."""
    add_schema_arguments(parser)


def run(args: Namespace, out: Output) -> Result:
    """Load, validate, then check the module boundaries; exit 3 on any crossing."""
    from toolkit_codegen.boundaries import check_boundaries

    result = load_schema(args.files, out)
    found = check_boundaries(result.schema)
    report(found, out)
    modules = len(result.schema.modules)
    data = {
        "modules": modules,
        "crossings": len(found),
        "diagnostics": [diagnostic_data(d) for d in found],
    }
    if found:
        raise InvalidInputError(
            f"{len(found)} reference(s) cross a module boundary",
            data=data,
            hint="reference across modules by id, or move the declarations into one module",
        )
    out.line(f"✔ {modules} module(s), no reference crosses a module boundary")
    return Result(data=data)

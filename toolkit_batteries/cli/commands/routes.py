"""``toolkit routes``: the HTTP routes the schema declares, one line each.

Read from the schema itself (no Django needed): the generated ``urls.py`` has exactly one
route per (method, path) listed here, so this is the API surface at a glance. Inside a
project the project's ``schema/`` is used.
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from toolkit_batteries.cli.output import Output, Result
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.schema_files import (
    add_schema_arguments,
    iter_rpcs,
    load_schema,
    module_label,
)

DESCRIPTION = """\
List the HTTP routes of the schema: one line per rpc with an `http:` binding,
`METHOD path -> Module.Service.Rpc` (the module of files right under schema/ is
`(root)`), sorted by path, then method. Rpcs without `http:` have no route.
"""
EPILOG = """\
examples:
  toolkit routes
  toolkit --json routes schema/
"""
BREADCRUMBS = ["toolkit explain"]

_METHOD_ORDER = {"GET": 0, "POST": 1, "PUT": 2, "PATCH": 3, "DELETE": 4}


def configure(parser: CommandParser) -> None:
    """Add the schema paths."""
    add_schema_arguments(parser)


def collect(schema: Any) -> list[dict[str, Any]]:
    """Return one row per HTTP rpc, sorted by path then method."""
    rows = []
    for module, service, rpc in iter_rpcs(schema):
        if rpc.http is None:
            continue
        auth = rpc.auth
        rows.append(
            {
                "method": rpc.http.method,
                "path": rpc.http.path,
                "module": module_label(module),
                "service": service.name,
                "rpc": rpc.name,
                "auth": "required" if auth is not None and auth.required else "none",
                "roles": list(auth.roles) if auth is not None else [],
                "paginated": rpc.paginated,
                "file": rpc.pos.file,
                "line": rpc.pos.line,
            }
        )
    rows.sort(key=lambda r: (r["path"], _METHOD_ORDER.get(r["method"], 9), r["method"]))
    return rows


def run(args: Namespace, out: Output) -> Result:
    """Print the routes; data is the list of route objects."""
    result = load_schema(args.files, out)
    rows = collect(result.schema)
    for row in rows:
        out.line(f"{row['method']} {row['path']} -> {row['module']}.{row['service']}.{row['rpc']}")
    if not rows:
        out.line("no HTTP routes (no rpc has an http: binding)")
    return Result(data=rows)

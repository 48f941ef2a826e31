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
`METHOD path -> Module.Service.Rpc  auth: ...` (the module of files right under
schema/ is `(root)`), sorted by path, then method. The auth column is what the route
enforces: `none`, `required`, its roles, and the action of a `permission: check`
(which needs a bearer token too). Rpcs without `http:` have no route.

Inside a project with no PATH, every other URL the project serves follows, from Django's
URL resolver (`* /api/login -> accounts.views.LoginView`), and each line ends with its
origin: [schema], [project] (hand-written), [toolkit] (a battery's view), [django]
(the admin, one row) or [library].
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
    from toolkit_codegen.nodes import enforced_access

    rows = []
    for module, service, rpc in iter_rpcs(schema):
        if rpc.http is None:
            continue
        access = enforced_access(rpc)
        rows.append(
            {
                "method": rpc.http.method,
                "path": rpc.http.path,
                "module": module_label(module),
                "service": service.name,
                "rpc": rpc.name,
                # As enforced: a permission check authenticates even without auth:.
                "auth": access["auth"],
                "roles": access["roles"],
                "permission": access["permission"],
                "paginated": rpc.paginated,
                "file": rpc.pos.file,
                "line": rpc.pos.line,
            }
        )
    rows.sort(key=lambda r: (r["path"], _METHOD_ORDER.get(r["method"], 9), r["method"]))
    return rows


def _target(row: dict[str, Any]) -> str:
    if row.get("origin", "schema") == "schema":
        return f"{row['module']}.{row['service']}.{row['rpc']}"
    return str(row["view"])


def _access(row: dict[str, Any]) -> str:
    text = str(row["auth"])
    if row["roles"]:
        text += f" (roles: {', '.join(row['roles'])})"
    if row["permission"]:
        text += f", permission: {row['permission']}"
    return text


def _served(out: Output) -> list[dict[str, Any]] | None:
    """Inside a project with no PATH: every URL Django serves beyond the schema's, or None.

    A project whose settings do not load (production without its variables) still gets
    the schema's routes, with a note saying why the rest is missing.
    """
    from ..project import find_project, setup_django
    from ..scaffold.project_info import codegen_app
    from ..url_origins import project_urls

    project = find_project()
    if project is None:
        return None
    try:
        setup_django(project)
        rows = project_urls(project.root, codegen_app(project))
    except Exception as exc:  # a settings error of any kind: list the schema's routes anyway
        from toolkit_batteries.core.redaction import redact_string

        out.err(f"note: the project's URLs are not listed: {redact_string(str(exc))[:200]}")
        return None
    return [row for row in rows if row["origin"] != "schema"]


def run(args: Namespace, out: Output) -> Result:
    """Print the routes; data is the list of route objects."""
    result = load_schema(args.files, out)
    rows = collect(result.schema)
    served = None if args.files else _served(out)
    if served is not None:
        for row in rows:
            row["origin"] = "schema"
        rows += served
        width = max((len(f"{r['method']} {r['path']} -> {_target(r)}") for r in rows), default=0)
        for row in rows:
            text = f"{row['method']} {row['path']} -> {_target(row)}".ljust(width)
            auth = f"  auth: {_access(row)}" if row["origin"] == "schema" else ""
            out.line(f"{text}  [{row['origin']}]{auth}")
        return Result(data=rows)
    lines = [
        (f"{row['method']} {row['path']} -> {row['module']}.{row['service']}.{row['rpc']}", row)
        for row in rows
    ]
    width = max((len(text) for text, _ in lines), default=0)
    for text, row in lines:
        out.line(f"{text.ljust(width)}  auth: {_access(row)}")
    if not rows:
        out.line("no HTTP routes (no rpc has an http: binding)")
    return Result(data=rows)

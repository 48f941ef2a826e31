"""``toolkit explain <Service.Rpc>``: everything the schema says about one operation.

One block answers the questions asked before calling or changing an rpc: where it is
declared, how it is reached (HTTP method and path), who may call it (auth and roles),
which errors it declares (with their HTTP statuses), whether it is paginated, where each
parameter travels (path, query or JSON body) and what it returns.
"""

from __future__ import annotations

import difflib
from argparse import Namespace
from typing import Any

from toolkit_batteries.cli.output import InvalidInputError, Output, Result, UsageError
from toolkit_batteries.cli.parser import CommandParser
from toolkit_batteries.cli.schema_files import (
    ROOT_LABEL,
    add_schema_arguments,
    iter_rpcs,
    load_schema,
    module_label,
)

DESCRIPTION = """\
Explain one rpc: where it is declared, its HTTP route, auth (and roles), declared errors,
pagination, where each parameter is read from, and what it returns.

Name it `Service.Rpc`, or `Module.Service.Rpc` (the module of files right under schema/
is `(root)`; `root` and `default` are accepted too).
"""
EPILOG = """\
examples:
  toolkit explain NoteService.GetNote
  toolkit explain billing.InvoiceService.GetInvoice schema/
  toolkit --json explain NoteService.ListNotes
"""
BREADCRUMBS = ["toolkit routes", "toolkit compile"]

_ROOT_ALIASES = {ROOT_LABEL, "root", "default", ""}
_BODY_METHODS = {"POST", "PUT", "PATCH"}


def configure(parser: CommandParser) -> None:
    """Add the operation name and the schema paths."""
    parser.add_argument(
        "operation",
        metavar="OPERATION",
        help="the rpc: Service.Rpc or Module.Service.Rpc",
    )
    add_schema_arguments(parser)


def _split(name: str) -> tuple[str | None, str, str]:
    parts = name.split(".")
    if len(parts) not in (2, 3) or not all(parts[-2:]):
        raise UsageError(
            f'invalid operation "{name}": want Service.Rpc or Module.Service.Rpc',
            hint="run `toolkit routes` to list the operations",
        )
    if len(parts) == 2:
        return None, parts[0], parts[1]
    return parts[0], parts[1], parts[2]


def _module_matches(wanted: str, module: Any) -> bool:
    if not module.name:
        root = wanted in _ROOT_ALIASES
        return root if not module.version else wanted in {module.version, module_label(module)}
    return wanted in {module.name, module_label(module)}


def run(args: Namespace, out: Output) -> Result:
    """Find the rpc and print its facts; data is the same facts as an object."""
    wanted_module, wanted_service, wanted_rpc = _split(args.operation)
    result = load_schema(args.files, out)
    schema = result.schema
    match = None
    for module, service, rpc in iter_rpcs(schema):
        if (
            service.name == wanted_service
            and rpc.name == wanted_rpc
            and (wanted_module is None or _module_matches(wanted_module, module))
        ):
            match = (module, service, rpc)
            break
    if match is None:
        raise InvalidInputError(
            f'no operation matches "{args.operation}"{_suggest(args.operation, schema)}',
            hint="run `toolkit routes` to list the operations",
        )
    facts = describe(schema, *match)
    for line in render(facts):
        out.line(line)
    return Result(data=facts)


def _suggest(name: str, schema: Any) -> str:
    candidates: dict[str, str] = {}
    for module, service, rpc in iter_rpcs(schema):
        for full in (
            f"{service.name}.{rpc.name}",
            f"{module_label(module)}.{service.name}.{rpc.name}",
        ):
            candidates.setdefault(full.lower(), full)
    close = difflib.get_close_matches(name.lower(), list(candidates), n=1, cutoff=0.6)
    return f' (did you mean "{candidates[close[0]]}"?)' if close else ""


def _type_text(ref: Any) -> str:
    name = f"enum({', '.join(ref.enum_values)})" if ref.is_inline_enum else ref.name
    return name + ("?" if ref.optional else "")


def _where(rpc: Any, param: Any) -> str:
    if rpc.http is None:
        return "argument"
    if param.name in rpc.http.path_params:
        return "path"
    return "body" if rpc.http.method in _BODY_METHODS else "query"


def _validation(rule: Any) -> dict[str, Any]:
    if rule is None:
        return {}
    keys = ("min_len", "max_len", "format", "gt", "gte", "lt", "lte")
    return {key: getattr(rule, key) for key in keys if getattr(rule, key) is not None}


def describe(schema: Any, module: Any, service: Any, rpc: Any) -> dict[str, Any]:
    """Return every fact about one rpc as plain data."""
    label = module_label(module)
    returns = rpc.returns.name
    kind = (
        "entity" if schema.entity(returns) else "message" if schema.message(returns) else "scalar"
    )
    params = [
        {
            "name": p.name,
            "type": _type_text(p.type),
            "optional": p.type.optional,
            "in": _where(rpc, p),
            "validate": _validation(p.validation),
        }
        for p in rpc.params
    ]
    if rpc.paginated:
        params += [
            {"name": "cursor", "type": "string?", "optional": True, "in": "query", "validate": {}},
            {
                "name": "limit",
                "type": "int32?",
                "optional": True,
                "in": "query",
                "validate": {"gte": 1, "lte": 200},
            },
        ]
    transports = []
    if rpc.http is not None:
        transports.append({"kind": "http", "method": rpc.http.method, "path": rpc.http.path})
    auth = rpc.auth
    return {
        "operation": f"{label}.{service.name}.{rpc.name}",
        "module": label,
        "service": service.name,
        "rpc": rpc.name,
        "file": rpc.pos.file,
        "line": rpc.pos.line,
        "column": rpc.pos.col,
        "doc": rpc.doc,
        "transports": transports,
        "auth": {
            "required": bool(auth is not None and auth.required),
            "roles": list(auth.roles) if auth is not None else [],
        },
        "errors": [{"code": e.code, "status": e.status, "message": e.message} for e in rpc.errors],
        "paginated": rpc.paginated,
        "params": params,
        "returns": {"type": returns, "kind": kind, "paginated": rpc.paginated},
    }


def render(facts: dict[str, Any]) -> list[str]:
    """Return the human block for :func:`describe`'s facts."""
    lines = [f"{facts['operation']}  {facts['file']}:{facts['line']}:{facts['column']}"]
    if facts["doc"]:
        lines.extend(f"  {line}".rstrip() for line in facts["doc"].splitlines())
    transports = ", ".join(f"HTTP {t['method']} {t['path']}" for t in facts["transports"])
    lines.append(f"  transports: {transports or 'none (no http: binding)'}")
    auth = facts["auth"]
    if not auth["required"]:
        auth_text = "none"
    elif auth["roles"]:
        auth_text = f"required (roles: {', '.join(auth['roles'])})"
    else:
        auth_text = "required"
    lines.append(f"  auth:       {auth_text}")
    errors = [
        f"{e['code']} ({e['status']})" + (f' "{e["message"]}"' if e["message"] else "")
        for e in facts["errors"]
    ]
    lines.append(f"  errors:     {', '.join(errors) or 'none'}")
    lines.append(
        "  paginated:  "
        + (
            "yes (query cursor and limit; answers {items, next_cursor})"
            if facts["paginated"]
            else "no"
        )
    )
    if facts["params"]:
        lines.append("  params:")
        width = max(len(p["name"]) for p in facts["params"]) + 1
        for p in facts["params"]:
            rules = ", ".join(f"{k}: {v}" for k, v in p["validate"].items())
            extra = f"  @validate({rules})" if rules else ""
            lines.append(f"    {(p['name'] + ':').ljust(width)} {p['type']} ({p['in']}){extra}")
    else:
        lines.append("  params:     none")
    returns = facts["returns"]
    page = " (a page of them)" if returns["paginated"] else ""
    lines.append(f"  returns:    {returns['type']} ({returns['kind']}){page}")
    return lines

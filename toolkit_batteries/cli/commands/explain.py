"""``toolkit explain <Service.Rpc | Job | Schedule | Saga>``: what the schema says about one.

One block answers the questions asked before calling or changing an rpc: where it is
declared, how it is reached (HTTP method and path), who may call it (auth, roles and the
permission check), which errors it declares (with their HTTP statuses), whether it is
paginated, where each parameter travels (path, query or JSON body) and what it returns.
A bare name explains a ``job`` (parameters, queue, retry, the schedules that dispatch
it), a ``schedule`` (cron and the job call) or a ``saga`` (its steps, their rpcs and the
pivot).
"""

from __future__ import annotations

import difflib
import json
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
Explain one rpc: where it is declared, its HTTP route, auth (and roles), its permission
check, declared errors, pagination, where each parameter is read from, and what it
returns. Or explain a job, a schedule or a saga by its bare name.

Name an rpc `Service.Rpc`, or `Module.Service.Rpc` (the module of files right under
schema/ is `(root)`; `root` and `default` are accepted too).
"""
EPILOG = """\
examples:
  toolkit explain NoteService.GetNote
  toolkit explain billing.InvoiceService.GetInvoice schema/
  toolkit --json explain NoteService.ListNotes
  toolkit explain SendDigest
"""
BREADCRUMBS = ["toolkit routes", "toolkit compile"]

_ROOT_ALIASES = {ROOT_LABEL, "root", "default", ""}
_BODY_METHODS = {"POST", "PUT", "PATCH"}


def configure(parser: CommandParser) -> None:
    """Add the operation name and the schema paths."""
    parser.add_argument(
        "operation",
        metavar="OPERATION",
        help="the rpc (Service.Rpc or Module.Service.Rpc), or a job, schedule or saga name",
    )
    add_schema_arguments(parser)


def _split(name: str) -> tuple[str | None, str, str]:
    parts = name.split(".")
    if len(parts) == 1 and parts[0]:
        return None, "", parts[0]
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
    if not wanted_service:
        facts = describe_background(schema, wanted_rpc)
        if facts is None:
            raise InvalidInputError(
                f'no job, schedule or saga is named "{wanted_rpc}"'
                f"{_suggest_background(wanted_rpc, schema)}",
                hint="name an rpc as Service.Rpc; run `toolkit routes` to list them",
            )
        for line in render_background(facts):
            out.line(line)
        return Result(data=facts)
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
    if getattr(ref, "is_list", False):
        name = f"[{name}]"
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
        # As the view enforces it: a permission check needs a bearer token too.
        "auth": {
            "required": bool(auth is not None and auth.required)
            or bool(rpc.permission is not None and rpc.permission.check),
            "roles": list(auth.roles) if auth is not None else [],
        },
        "permission": _permission(schema, rpc),
        "errors": [{"code": e.code, "status": e.status, "message": e.message} for e in rpc.errors],
        "paginated": rpc.paginated,
        "params": params,
        "returns": {"type": returns, "kind": kind, "paginated": rpc.paginated},
        "runs": _runs(schema, module, service, rpc),
        "ids": _ids(schema, module, service, rpc),
    }


def _ids(schema: Any, module: Any, service: Any, rpc: Any) -> list[dict[str, Any]]:
    """Say what each relation id parameter (and the owner field) of the rpc must satisfy.

    A ``belongs_to`` column (``team_id``) and a ``many_to_many`` id list (``tags``) must
    name rows that exist and that the caller may read (the target's ``GET`` check), else
    400; a CRUD default checks it, a handler calls ``crud.check_references``. The owner
    field (the entity's read check's ``owner_field``) must be the caller's own id.
    """
    from toolkit_codegen.backends._django_common import RpcRef
    from toolkit_codegen.backends._relations import read_check
    from toolkit_codegen.backends.crud import crud_of

    crud = crud_of(schema, RpcRef(module, service, rpc)) if rpc.http is not None else None
    entity = crud.entity if crud is not None else schema.entity(rpc.returns.name)
    if entity is None:
        return []
    by_crud = crud is not None and crud.kind in ("create", "update")
    names = {p.name: p for p in rpc.params}
    found: list[dict[str, Any]] = []
    for rel in entity.relations:
        param = names.get(rel.foreign_key if rel.kind == "belongs_to" else rel.name)
        if rel.kind not in ("belongs_to", "many_to_many") or param is None:
            continue
        if rel.kind == "many_to_many" and not param.type.is_list:
            continue
        check = read_check(schema, rel.target)
        found.append(
            {
                "param": param.name,
                "kind": rel.kind,
                "target": rel.target,
                "read": _check_facts(check),
                "checked_by": "crud" if by_crud else "handler",
            }
        )
    own = read_check(schema, entity.name)
    if own is not None and own.owner_field and own.owner_field in names:
        found.append(
            {
                "param": own.owner_field,
                "kind": "owner",
                "target": entity.name,
                "read": _check_facts(own),
                "checked_by": "crud" if by_crud else "handler",
            }
        )
    return found


def _check_facts(check: Any) -> dict[str, str] | None:
    if check is None:
        return None
    return {"action": check.action or "", "owner_field": check.owner_field or ""}


def _ids_text(fact: dict[str, Any]) -> str:
    read = fact["read"]
    helper = "crud.check_owner" if fact["kind"] == "owner" else "crud.check_references"
    who = "the CRUD default checks it" if fact["checked_by"] == "crud" else f"handler: {helper}"
    if fact["kind"] == "owner":
        return f"the caller's own id ({fact['target']}'s read check compares it); else 400 ({who})"
    many = fact["kind"] == "many_to_many"
    rule = f"ids of existing {fact['target']} rows" if many else f"an existing {fact['target']}"
    if read is not None:
        owner = f", owner in {read['owner_field']}" if read["owner_field"] else ""
        rule += f' the caller may read (check "{read["action"]}"{owner})'
    rule += f"; else 400, as an unknown id ({who})"
    return rule + ("; answers list only readable ids" if many else "")


def _runs(schema: Any, module: Any, service: Any, rpc: Any) -> dict[str, Any]:
    """Say what answers the rpc: an ORM CRUD default or the user's handler method.

    ``missed`` explains why an rpc named like a CRUD rpc gets no default (a renamed
    parameter, say), which is why its route answers 501 until the handler is written.
    """
    from toolkit_codegen.backends._django_common import RpcRef, handler_name
    from toolkit_codegen.drift import crud_status

    handler = f"{service.name}.{handler_name(rpc)}"
    if rpc.http is None:
        return {"kind": "handler", "handler": handler, "crud": None, "missed": ""}
    status = crud_status(schema, RpcRef(module, service, rpc))
    return {
        "kind": "crud" if status.kind else "handler",
        "handler": handler,
        "crud": status.kind or None,
        "missed": status.missed,
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
    permission = facts["permission"]
    if permission is not None:
        lines.append(f"  permission: {_permission_text(permission)}")
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
    ids = facts.get("ids") or []
    if ids:
        lines.append("  ids:")
        width = max(len(f["param"]) for f in ids) + 1
        for fact in ids:
            lines.append(f"    {(fact['param'] + ':').ljust(width)} {_ids_text(fact)}")
    returns = facts["returns"]
    page = " (a page of them)" if returns["paginated"] else ""
    lines.append(f"  returns:    {returns['type']} ({returns['kind']}){page}")
    runs = facts.get("runs") or {}
    handler = f"handlers.py {runs.get('handler', '')}"
    if runs.get("kind") == "crud":
        lines.append(
            f"  runs:       the ORM CRUD default ({runs['crud']}) unless {handler} is defined"
        )
    elif runs.get("missed"):
        lines.append(f"  runs:       {handler} (no CRUD default: {runs['missed']})")
    elif runs:
        lines.append(f"  runs:       {handler}")
    return lines


def _permission(schema: Any, rpc: Any) -> dict[str, Any] | None:
    from toolkit_codegen.nodes import permission_lookup_param

    permission = rpc.permission
    if permission is None:
        return None
    if not permission.check:
        return {"check": False}
    entity = schema.entity(permission.resource) if permission.resource else None
    lookup = permission_lookup_param(rpc, entity) if entity is not None else None
    return {
        "check": True,
        "action": permission.action,
        "resource": permission.resource,
        "owner_field": permission.owner_field,
        "lookup": lookup.name if lookup is not None else None,
    }


def _permission_text(facts: dict[str, Any]) -> str:
    if not facts["check"]:
        return "none (no check)"
    text = f'check "{facts["action"]}"'
    if facts["resource"] and facts["lookup"]:
        text += f" on the {facts['resource']} named by {facts['lookup']}"
    elif facts["resource"]:
        text += f" on {facts['resource']} (no parameter names one: checked without it)"
    if facts["owner_field"]:
        text += f", owner in {facts['owner_field']}"
    return text


def _suggest_background(name: str, schema: Any) -> str:
    names = [x.name for x in (*schema.jobs, *schema.schedules, *schema.sagas)]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _module_of(schema: Any, decl: Any) -> str:
    for module in schema.modules:
        if any(decl is x for x in (*module.jobs, *module.schedules, *module.sagas)):
            return module_label(module)
    return ROOT_LABEL


def _facts_of(schema: Any, kind: str, decl: Any) -> dict[str, Any]:
    """Return the facts every background declaration starts with (what, where, its doc)."""
    return {
        "kind": kind,
        "name": decl.name,
        "module": _module_of(schema, decl),
        "file": decl.pos.file,
        "line": decl.pos.line,
        "column": decl.pos.col,
        "doc": decl.doc,
    }


def describe_background(schema: Any, name: str) -> dict[str, Any] | None:
    """Return the facts of the job, schedule or saga called ``name``, or None."""
    job = schema.job(name)
    if job is not None:
        retry = job.retry
        return {
            **_facts_of(schema, "job", job),
            "params": [
                {"name": p.name, "type": _type_text(p.type), "validate": _validation(p.validation)}
                for p in job.params
            ],
            "queue": job.queue or "default",
            "retry": {
                "max_attempts": retry.max_attempts if retry else None,
                "backoff": retry.backoff if retry else None,
                "base_seconds": retry.backoff_base if retry else None,
            },
            "scheduled_by": [
                s.name for s in schema.schedules if s.dispatch and s.dispatch.job == job.name
            ],
        }
    schedule = next((s for s in schema.schedules if s.name == name), None)
    if schedule is not None:
        call = schedule.dispatch
        return {
            **_facts_of(schema, "schedule", schedule),
            "cron": schedule.cron,
            "dispatch": {"job": call.job, "args": list(call.args)} if call else None,
        }
    saga = next((s for s in schema.sagas if s.name == name), None)
    if saga is None:
        return None
    return {
        **_facts_of(schema, "saga", saga),
        "steps": [
            {
                "name": st.name,
                "execute": str(st.execute) if st.execute else None,
                "compensate": str(st.compensate) if st.compensate else None,
                "pivot": st.pivot,
            }
            for st in saga.steps
        ],
        "pivot": next((st.name for st in saga.steps if st.pivot), None),
    }


def render_background(facts: dict[str, Any]) -> list[str]:
    """Return the human block for :func:`describe_background`'s facts."""
    head = f"{facts['kind']} {facts['module']}.{facts['name']}"
    lines = [f"{head}  {facts['file']}:{facts['line']}:{facts['column']}"]
    if facts["doc"]:
        lines.extend(f"  {line}".rstrip() for line in facts["doc"].splitlines())
    if facts["kind"] == "job":
        params = ", ".join(f"{p['name']}: {p['type']}" for p in facts["params"])
        lines.append(f"  params:     {params or 'none'}")
        lines.append(f"  queue:      {facts['queue']}")
        retry = facts["retry"]
        parts = []
        if retry["max_attempts"] is not None:
            parts.append(f"{retry['max_attempts']} attempts")
        if retry["backoff"]:
            base = retry["base_seconds"]
            parts.append(
                f"{retry['backoff']} backoff" + (f" from {base:g}s, doubling" if base else "")
            )
        lines.append(f"  retry:      {', '.join(parts) or 'none (one attempt)'}")
        lines.append(f"  scheduled:  {', '.join(facts['scheduled_by']) or 'by no schedule'}")
        lines.append("  dispatch:   generated/jobs.py dispatch_<job>(...); body in jobs.py")
    elif facts["kind"] == "schedule":
        lines.append(f"  cron:       {facts['cron']}")
        call = facts["dispatch"]
        if call is not None:
            args = ", ".join(json.dumps(a) for a in call["args"])
            lines.append(f"  dispatch:   {call['job']}({args})")
    else:
        lines.append("  steps:")
        for step in facts["steps"]:
            undo = f", undo {step['compensate']}" if step["compensate"] else ", no compensation"
            pivot = "  (pivot: no compensation once done)" if step["pivot"] else ""
            lines.append(f"    {step['name']}: {step['execute']}{undo}{pivot}")
    return lines

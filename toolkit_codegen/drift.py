"""Drift between the schema and the user's code: handlers and jobs that no longer fit.

``handlers.py`` and ``jobs.py`` belong to the user, so a compile never rewrites them, and
a schema change can leave them behind without any error until a request or a job runs:

* a handler method whose parameters are not the rpc's any more (the generated view calls
  it with the rpc's parameters as keywords: a ``TypeError``, answered 500);
* an rpc that ran a CRUD default until a rename made it something else (say a parameter
  that is no longer a field of the entity): the compile appends a stub and the route
  answers 501 ``unimplemented``;
* a job function whose parameters differ from the declared job (the worker calls it
  with the job's arguments, in order: a ``TypeError`` in the worker, then a dead letter).

:func:`code_drift` reads both files with :mod:`ast` (never importing them) and returns
one :class:`~toolkit_codegen.nodes.Diagnostic` per problem, at the line of the user's
code, naming the schema declaration it disagrees with and the fix. ``toolkit compile``
reports them (warnings: nothing is refused), and ``manage.py check`` reports the same
as ``toolkit_codegen_app`` checks (errors where a call must fail).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from .backends._background import job_function
from .backends._django_common import RpcRef, all_services, handler_name
from .backends.crud import crud_of, is_crud, list_order
from .nodes import Diagnostic, Entity, Job, Position, Rpc, Schema, Service

__all__ = ["CrudStatus", "code_drift", "crud_status", "handlers_drift", "jobs_drift"]

#: The phase shown in the diagnostics.
PHASE = "drift"
#: Name prefixes that make an rpc look like a CRUD rpc of the entity it returns.
_VERBS = {"Create": "create", "Get": "get", "List": "list", "Update": "update", "Delete": "delete"}


@dataclass(frozen=True, slots=True)
class CrudStatus:
    """Whether an rpc runs a CRUD default, and why not when it looks like one."""

    #: ``get``/``list``/``create``/``update``/``delete`` when a default applies, else "".
    kind: str
    #: Why the CRUD default does not apply to an rpc named like one ("" otherwise).
    missed: str = ""


def crud_status(schema: Schema, ref: RpcRef) -> CrudStatus:
    """Return whether ``ref`` runs an ORM default and, for a near miss, the reason."""
    if is_crud(schema, ref):
        found = crud_of(schema, ref)
        assert found is not None
        return CrudStatus(found.kind)
    rpc = ref.rpc
    entity = schema.entity(rpc.returns.name)
    verb = next((v for v in _VERBS if rpc.name.startswith(v)), None)
    if entity is None or verb is None or rpc.http is None:
        return CrudStatus("")
    rest = rpc.name[len(verb) :]
    if rest not in (entity.name, entity.name + "s", entity.name + "es"):
        return CrudStatus("")
    return CrudStatus("", _why_not(_VERBS[verb], entity, ref))


def _why_not(kind: str, entity: Entity, ref: RpcRef) -> str:
    """Say which part of a CRUD-named rpc breaks the CRUD rule (docs/compiler.md)."""
    rpc = ref.rpc
    if rpc.returns.optional:
        return f"it returns {entity.name}? (optional)"
    expected = {
        "get": "GET",
        "delete": "DELETE",
        "list": "GET",
        "create": "POST",
        "update": "PUT or PATCH",
    }[kind]
    if ref.method not in expected.split(" or "):
        return f"it is bound to {ref.method}, not {expected}"
    primary = entity.primary_fields
    key = primary[0] if len(primary) == 1 else None
    if kind == "list":
        if rpc.params:
            return f'a default list takes no parameters, and it has "{rpc.params[0].name}"'
        if list_order(entity) is None:
            return f"{entity.name} has no single @primary field to order a list by"
        return "it is not paginated: true"
    if rpc.paginated:
        return "only a list may be paginated: true"
    if kind in ("get", "delete", "update"):
        if key is None:
            return f"{entity.name} has no single @primary field"
        first = rpc.params[0] if rpc.params else None
        if first is None or first.name != key.name:
            return f'its first parameter must be the key "{key.name}: {key.type.name}"'
        if first.type.name != key.type.name:
            return (
                f'its key "{first.name}" is typed {first.type.name}, '
                f"{entity.name}.{key.name} is {key.type.name}"
            )
        if kind != "update" and len(rpc.params) > 1:
            return f'it takes "{rpc.params[1].name}" besides the key'
    others = rpc.params[1:] if kind == "update" else rpc.params
    for param in others:
        field = entity.field(param.name)
        if field is None:
            return f'parameter "{param.name}" is not a field of {entity.name}'
        if field.primary:
            return f'parameter "{param.name}" is the key, which a create generates'
        if (param.type.name, param.type.enum_values) != (field.type.name, field.type.enum_values):
            return (
                f'parameter "{param.name}" is typed {param.type.name}, '
                f"{entity.name}.{field.name} is {field.type.name}"
            )
    if kind == "create":
        given = {p.name for p in rpc.params}
        for field in entity.fields:
            if field.primary:
                if field.type.name not in ("uuid", "int32", "int64"):
                    return f"its key {entity.name}.{field.name} is not generated (uuid or int)"
                continue
            if field.name not in given and field.default is None and not field.optional:
                return f'required field "{field.name}" of {entity.name} is not a parameter'
        return "an optional parameter stands for a required field without a default"
    if kind == "update" and len(rpc.params) < 2:
        return "it changes no field (an update takes the key, then fields)"
    return "its shape is not one of the CRUD rule's"


# --------------------------------------------------------------------------- handlers


def _methods(node: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _is_stub(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Return whether a function only raises NotImplementedError (after a docstring)."""
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    target = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(target, ast.Name) and target.id == "NotImplementedError"


def _param_type(schema: Schema, rpc: Rpc, name: str) -> str:
    from .backends._django_common import python_type

    for param in rpc.params:
        if param.name == name:
            return f"{name}: {python_type(schema, param.type)}"
    return f"{name}: {'str | None' if name == 'cursor' else 'int'}"


def _signature_problems(
    schema: Schema, service: Service, rpc: Rpc, func: ast.FunctionDef | ast.AsyncFunctionDef
) -> Iterator[str]:
    args = func.args
    if args.kwarg is not None:
        return  # **kwargs takes whatever the view passes
    expected = [p.name for p in rpc.params] + (["cursor", "limit"] if rpc.paginated else [])
    positional = [a.arg for a in (*args.posonlyargs, *args.args)][2:]  # self, request
    accepted = set(positional) | {a.arg for a in args.kwonlyargs}
    where = f"rpc {service.name}.{rpc.name} ({rpc.pos})"
    for name in expected:
        if name not in accepted:
            yield (
                f'handler {service.name}.{func.name} does not take "{name}", a parameter of '
                f"{where}: the view's call fails (TypeError, answered 500); add "
                f'"{_param_type(schema, rpc, name)}" after the "*"'
            )
    optional_kw = {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d}
    required = [a.arg for a in args.kwonlyargs if a.arg not in optional_kw]
    defaults = len(args.defaults)
    required += positional[: len(positional) - defaults] if defaults else positional
    for name in required:
        if name not in expected:
            yield (
                f'handler {service.name}.{func.name} requires "{name}", which {where} does '
                "not pass: rename it to the rpc's parameter, or remove it"
            )


def handlers_drift(schema: Schema, text: str, display: str) -> list[Diagnostic]:
    """Return the drift of ``handlers.py`` (``text``, shown as ``display``)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # the compile reports invalid Python on its own
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    found: list[Diagnostic] = []
    for module, service in all_services(schema):
        node = classes.get(service.name)
        methods = _methods(node) if node is not None else {}
        for rpc in service.rpcs:
            func = methods.get(handler_name(rpc))
            if func is not None:
                for message in _signature_problems(schema, service, rpc, func):
                    found.append(Diagnostic(Position(display, func.lineno, 1), PHASE, message))
            if rpc.http is None:
                continue
            status = crud_status(schema, RpcRef(module, service, rpc))
            if status.missed and (func is None or _is_stub(func)):
                line = func.lineno if func is not None else (node.lineno if node else 1)
                route = f"{rpc.http.method.upper()} {rpc.http.path}"
                message = (
                    f"rpc {service.name}.{rpc.name} ({rpc.pos}) runs no CRUD default: "
                    f"{status.missed}, so {route} answers 501 until "
                    f"{service.name}.{handler_name(rpc)} is written; make the rpc plain "
                    'CRUD again (docs/compiler.md, "CRUD rpcs") or implement the handler'
                )
                found.append(
                    Diagnostic(Position(display, line, 1), PHASE, message, severity="warning")
                )
    return found


# --------------------------------------------------------------------------- jobs


def _job_problem(job: Job, func: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    args = func.args
    if args.vararg is not None:
        return None
    declared = [p.name for p in job.params]
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    required = positional[: len(positional) - len(args.defaults)]
    if (
        positional[: len(declared)] == declared
        and len(required) <= len(declared)
        and all(d is not None for d in args.kw_defaults)
    ):
        return None
    wanted = ", ".join(declared) or "no arguments"
    return (
        f"job function {func.name}({', '.join(positional)}) does not match job {job.name}"
        f"({', '.join(declared)}) ({job.pos}): the worker calls it with ({wanted}) in that "
        "order and fails with TypeError (then dead-letters the job); rename its parameters "
        "to the job's"
    )


def jobs_drift(schema: Schema, text: str, display: str) -> list[Diagnostic]:
    """Return the drift of ``jobs.py`` (``text``, shown as ``display``)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    functions = {
        n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    found: list[Diagnostic] = []
    for job in schema.jobs:
        func = functions.get(job_function(job))
        if func is None:
            continue
        problem = _job_problem(job, func)
        if problem is not None:
            line = func.decorator_list[0].lineno if func.decorator_list else func.lineno
            found.append(Diagnostic(Position(display, line, 1), PHASE, problem))
    return found


def code_drift(
    schema: Schema,
    handlers: tuple[str, str] | None,
    jobs: tuple[str, str] | None,
    *,
    severity: str = "error",
) -> list[Diagnostic]:
    """Return the drift of ``(text, display)`` of handlers.py and jobs.py (either None).

    Signature problems get ``severity`` (the compile reports them as warnings, the
    system check as errors); a lost CRUD default is always a warning.
    """
    found: list[Diagnostic] = []
    if handlers is not None:
        found += handlers_drift(schema, *handlers)
    if jobs is not None:
        found += jobs_drift(schema, *jobs)
    return sorted(
        Diagnostic(d.pos, d.phase, d.message, severity=severity)  # type: ignore[arg-type]
        if d.severity == "error"
        else d
        for d in found
    )

"""The ``views`` backend: DRF viewsets in ``generated/views.py``, one per schema service.

Each viewset (``NoteServiceViewSet``) is a ``toolkit_batteries.api_runtime.views.GeneratedViewSet``
with one action per rpc, named like the handler (``create_note``); ``generated/urls.py``
binds every path's methods to actions (``as_view({"get": ..., "post": ...})``), so paths
stay exactly as declared. A path whose methods belong to several services gets one
viewset of its own whose actions are those of the services' viewsets. An action
validates the request, calls the user's handler (``handlers.<Service>().<handler>(request,
**params)`` in ``<app>/handlers.py``) and serialises what it returns: no business logic.
Plain CRUD rpcs (:mod:`.crud`) fall back to ORM defaults when the handler class lacks
their method. Its ``extend_schema`` gives drf-spectacular
what the compiled ``openapi.json`` says (operationId ``<Service>_<Rpc>``, parameters,
request component, ``200 OK`` with the returned type, one response per ``errors:`` status,
``bearerAuth`` via the view's authentication), plus the statuses the view itself answers
(400, 401, 403, 413), so a client or a fuzzer knows every status it may see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..escaping import py_docstring
from ..nodes import ERROR_STATUS, Diagnostic, Schema, permission_lookup_param, snake_case
from ..pysource import Call, Dict, List, Raw, assign, expr_of, render, sorted_all
from . import BackendError, BackendOptions, entity_named
from ._django_common import (
    PY_HEADER,
    RpcRef,
    check_names,
    component_name,
    http_rpcs,
    route_of,
    route_sort_key,
    url_name,
    view_class_name,
)
from ._django_fields import serializer_class
from ._jsonschema import CURSOR_SCHEMA, openapi_type_schema
from .crud import CrudRpc, crud_of, is_crud, list_order
from .models import package_init
from .openapi import permission_extension, roles_description
from .serializers import body_params, params_class, request_class, url_params

__all__ = ["Route", "generate", "routes"]

#: The statuses a generated view answers by itself, and their descriptions.
_OWN_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    413: "PAYLOAD_TOO_LARGE",
}
_METHOD_ORDER = ("GET", "POST", "PUT", "PATCH", "DELETE")


@dataclass
class Route:
    """One schema path: its view class, URL name and the rpcs bound to it."""

    path: str
    view: str
    name: str
    rpcs: list[RpcRef] = field(default_factory=list)

    @property
    def route(self) -> str:
        """Return the Django route (``v1/users/<str:id>``)."""
        return route_of(self.path)

    @property
    def merged(self) -> bool:
        """Return whether the path's rpcs come from more than one service."""
        return len({r.service.name for r in self.rpcs}) > 1

    def action_refs(self) -> list[tuple[str, RpcRef]]:
        """Return (action, rpc) per method: the handler name, service-prefixed on a clash."""
        names = [r.handler for r in self.rpcs]
        return [
            (
                f"{snake_case(r.service.name)}_{r.handler}"
                if names.count(r.handler) > 1
                else r.handler,
                r,
            )
            for r in self.rpcs
        ]

    def actions(self) -> dict[str, str]:
        """Return the ``as_view`` mapping: lower-case method -> action."""
        return {r.method.lower(): action for action, r in self.action_refs()}


def routes(schema: Schema, phase: str) -> list[Route]:
    """Return the app's routes, most specific first; reject clashing ones."""
    by_path: dict[str, Route] = {}
    by_shape: dict[str, str] = {}
    claimed: dict[tuple[str, str], RpcRef] = {}
    problems: list[Diagnostic] = []
    for ref in http_rpcs(schema):
        shape = _shape(ref.path)
        first_path = by_shape.setdefault(shape, ref.path)
        if first_path != ref.path:
            problems.append(
                Diagnostic(
                    ref.rpc.http.pos,  # type: ignore[union-attr]
                    phase,
                    f"path {ref.path} matches the same URLs as {first_path}; "
                    "use one spelling of the path",
                )
            )
            continue
        key = (ref.method, ref.path)
        other = claimed.setdefault(key, ref)
        if other is not ref:
            problems.append(
                Diagnostic(
                    ref.rpc.http.pos,  # type: ignore[union-attr]
                    phase,
                    f"{ref.method} {ref.path} is declared by both "
                    f"{other.service.name}.{other.rpc.name} and {ref.service.name}.{ref.rpc.name}",
                )
            )
            continue
        route = by_path.get(ref.path)
        if route is None:
            route = by_path[ref.path] = Route(ref.path, "", "")
        route.rpcs.append(ref)
    if problems:
        raise BackendError(problems)
    ordered = sorted(by_path.values(), key=lambda r: route_sort_key(r.path))
    views = {f"{ref.service.name}ViewSet" for ref in http_rpcs(schema)} | {"AppViewSet"}
    names: set[str] = set()
    for route in sorted(ordered, key=lambda r: r.path):
        if route.merged:
            own = f"{view_class_name(route.path)}Set"
            route.view = _unique(own, views, lambda n, i: f"{n[:-7]}{i}ViewSet")
        else:
            route.view = f"{route.rpcs[0].service.name}ViewSet"
        route.name = _unique(url_name(route.path), names, lambda n, i: f"{n}_{i}")
        route.rpcs.sort(key=lambda r: _METHOD_ORDER.index(r.method))
    return ordered


def _shape(path: str) -> str:
    """Return the path with its parameters unnamed (``/users/{}``): what a router sees."""
    return re.sub(r"\{[^{}]*\}", "{}", path)


def _unique(name: str, taken: set[str], variant: object) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate = variant(name, n)  # type: ignore[operator]
        n += 1
    taken.add(candidate)
    return candidate


def generate(schema: Schema, options: BackendOptions) -> dict[str, str]:
    """Return ``generated/__init__.py`` and ``generated/views.py``."""
    del options
    check_names(schema, "views")
    return {"generated/__init__.py": package_init(), "generated/views.py": render_views(schema)}


@dataclass
class ServiceViews:
    """One service's viewset: its rpcs with HTTP bindings, and which are plain CRUD."""

    name: str
    rpcs: list[RpcRef]
    crud: dict[str, CrudRpc]

    @property
    def viewset(self) -> str:
        """Return the viewset class (``NoteServiceViewSet``)."""
        return f"{self.name}ViewSet"

    @property
    def handlers(self) -> str:
        """Return what the actions instantiate: the user's class, or it with the defaults."""
        return f"{self.name}Handlers" if self.crud else f"handlers.{self.name}"


def services(schema: Schema) -> list[ServiceViews]:
    """Return the services with HTTP rpcs, in declaration order."""
    found: dict[str, ServiceViews] = {}
    for ref in http_rpcs(schema):
        views = found.setdefault(ref.service.name, ServiceViews(ref.service.name, [], {}))
        views.rpcs.append(ref)
        if is_crud(schema, ref):
            views.crud[ref.handler] = crud_of(schema, ref)  # type: ignore[assignment]
    return list(found.values())


def render_views(schema: Schema) -> str:
    """Return the text of ``generated/views.py``."""
    all_routes = routes(schema, "views")
    all_services = services(schema)
    refs = [r for route in all_routes for r in route.rpcs]
    runtime = ["GeneratedViewSet", "extend_schema"]
    if any(_bearer(r) for r in refs):
        runtime.append("Bearer")
    if any(r.rpc.paginated for r in refs):
        runtime.append("PageOf")
    if any(not _bearer(r) for r in refs):
        runtime.append("Public")
    if any(_check(r) for r in refs):
        runtime.append("Check")
    uses_crud = any(sv.crud for sv in all_services)
    if uses_crud:
        runtime.append("with_defaults")
    uses_models = uses_crud or any(_on_object(schema, r) for r in refs)
    uses_params = any(url_params(r) or r.rpc.paginated for r in refs)
    spectacular = ["OpenApiResponse"]
    if uses_params:
        spectacular.insert(0, "OpenApiParameter")
    merged = [route for route in all_routes if route.merged]
    names = ["AppViewSet", *(sv.viewset for sv in all_services), *(r.view for r in merged)]
    out = [
        PY_HEADER,
        '"""DRF viewsets of the schema: validate the request, call the handler, serialise.',
        "",
        "One viewset per service, one action per rpc; ``urls.py`` binds each path's methods to",
        "actions. Business logic lives in the app's ``handlers.py``; plain CRUD rpcs without a",
        "handler method use the ORM defaults below.",
        '"""',
        "",
        "from django.http import HttpResponse",
        f"from drf_spectacular.utils import {', '.join(spectacular)}",
        "from rest_framework.request import Request",
    ]
    if uses_crud or _reads(schema).pairs:  # READS is made of crud.Read
        out.append("from toolkit_batteries.api_runtime import crud")
    out += [
        _import("toolkit_batteries.api_runtime.views", sorted_all(runtime)),
        "",
        f"from .. import handlers{', models' if uses_models else ''}",
        "from . import serializers as s",
        "",
        assign("__all__", List(sorted(names))),
        "",
        "",
        "class AppViewSet(GeneratedViewSet):",
        '    """The base of this app\'s generated viewsets: it knows every schema component."""',
        "",
        "    components = s.COMPONENTS",
        "    enum_components = s.ENUMS",
    ]
    reads = _reads(schema)
    has_reads = bool(reads.pairs)
    if has_reads:
        out += [
            "",
            "#: Per entity, the check of its get rpc: an id naming a row in a create or update",
            "#: must pass it for the caller, else the answer is that of an id naming no row;",
            "#: a response lists only the many_to_many ids that pass it. Hand-written handlers",
            "#: get the same check from crud.check_references(model, params, request).",
            assign("READS", reads),
        ]
    for sv in all_services:
        if sv.crud:
            out += ["", "", _defaults(sv, has_reads)]
        out += ["", "", _viewset(schema, sv)]
    for route in merged:
        out += ["", "", _merged_viewset(schema, route)]
    return "\n".join(out) + "\n"


def _import(module: str, names: list[str]) -> str:
    """Return ``from module import a, b``, parenthesised one name a line past 100 columns."""
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= 100:
        return line
    return f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"


def _bearer(ref: RpcRef) -> bool:
    return ref.rpc.auth is not None and ref.rpc.auth.required


def _check(ref: RpcRef) -> bool:
    return ref.rpc.permission is not None and ref.rpc.permission.check


def _on_object(schema: Schema, ref: RpcRef) -> str | None:
    """Return the parameter naming a ``permission: check``'s resource object, or None."""
    permission = ref.rpc.permission
    if permission is None or not permission.check or permission.resource is None:
        return None
    entity = entity_named(schema, permission.resource)
    if entity is None:
        return None
    param = permission_lookup_param(ref.rpc, entity)
    return param.name if param is not None else None


def _defaults(sv: ServiceViews, reads: bool) -> str:
    """Return ``<Service>Crud``; ``reads``: pass the module's ``READS`` to create/update."""
    lines = [
        f"class {sv.name}Crud:",
        _doc(
            f"ORM defaults of {sv.name}'s plain CRUD rpcs; handlers.{sv.name} may replace any.", 4
        ),
        "",
    ]
    for action, found in sv.crud.items():
        model = Raw(f"models.{found.entity.name}")
        if found.kind == "list":
            call = Call("crud.list_page", [model, Raw(repr(list_order(found.entity)))])
        elif found.kind == "create":
            call = Call("crud.create", [model], [("reads", Raw("READS"))] if reads else [])
        elif found.kind == "update":
            ref = next(r for r in sv.rpcs if r.handler == action)
            kwargs: list[tuple[str, object]] = [("partial", ref.method == "PATCH")]
            if reads:
                kwargs.append(("reads", Raw("READS")))
            call = Call("crud.update", [model, found.lookup], kwargs)
        else:
            call = Call(f"crud.{found.kind}", [model, found.lookup])
        lines.append(assign(action, call, indent=1))
    lines += ["", "", f"{sv.handlers} = with_defaults(handlers.{sv.name}, {sv.name}Crud)"]
    return "\n".join(lines)


def _viewset(schema: Schema, sv: ServiceViews) -> str:
    listed = ", ".join(f"{r.method} {r.path}" for r in sv.rpcs)
    rpcs = Dict([(r.handler, f"{r.service.name}.{r.rpc.name}") for r in sv.rpcs])
    auth = Dict([(r.handler, _auth_expr(r)) for r in sv.rpcs])
    lines = [
        f"class {sv.viewset}(AppViewSet):",
        _doc(f"The {sv.name} rpcs: {listed}.", 4),
        "",
        assign("rpcs", rpcs, indent=1),
        assign("auth", auth, indent=1),
    ]
    checks = [(r.handler, _check_expr(schema, r)) for r in sv.rpcs if _check(r)]
    if checks:
        lines.append(assign("checks", Dict(checks), indent=1))
    for ref in sv.rpcs:
        lines += ["", _method(schema, ref, sv)]
    return "\n".join(lines)


def _check_expr(schema: Schema, ref: RpcRef) -> Call:
    permission = ref.rpc.permission
    assert permission is not None
    kwargs: list[tuple[str, object]] = []
    if _on_object(schema, ref):
        kwargs.append(("on_object", True))
        if permission.owner_field:
            kwargs.append(("owner_field", permission.owner_field))
        read = _read_action(schema, permission.resource or "")
        if read and read != permission.action:
            kwargs.append(("read", read))
    return Call("Check", [permission.action or ""], kwargs)


def _read_action(schema: Schema, entity: str) -> str:
    """Return the action of the ``GET`` rpc that checks one ``entity`` object, or ""."""
    from ._relations import read_check

    permission = read_check(schema, entity)
    return (permission.action or "") if permission is not None else ""


def _reads(schema: Schema) -> Dict:
    """Return ``READS``: per entity, the check a row must pass for an id naming it."""
    from ._relations import read_checks

    pairs: list[tuple[str, object]] = []
    for name, permission in read_checks(schema):
        kwargs = [("owner_field", permission.owner_field)] if permission.owner_field else []
        pairs.append((name, Call("crud.Read", [permission.action], kwargs)))
    return Dict(pairs)


def _merged_viewset(schema: Schema, route: Route) -> str:
    """Return the viewset of a path whose methods belong to several services."""
    actions = route.action_refs()
    lines = [
        f"class {route.view}(AppViewSet):",
        _doc(f"{route.path}: the actions of several services on one path.", 4),
        "",
        assign("rpcs", Dict([(a, f"{r.service.name}.{r.rpc.name}") for a, r in actions]), indent=1),
        assign("auth", Dict([(a, _auth_expr(r)) for a, r in actions]), indent=1),
    ]
    checks = [(a, _check_expr(schema, r)) for a, r in actions if _check(r)]
    if checks:
        lines.append(assign("checks", Dict(checks), indent=1))
    for action, ref in actions:
        lines.append(f"    {action} = {ref.service.name}ViewSet.{ref.handler}")
    return "\n".join(lines)


def _auth_expr(ref: RpcRef) -> Call:
    # A permission check authenticates (401 without a token): the view says so.
    if not _bearer(ref):
        return Call("Bearer") if _check(ref) else Call("Public")
    assert ref.rpc.auth is not None
    return Call("Bearer", list(ref.rpc.auth.roles))


def _doc(text: str, indent: int) -> str:
    pad = " " * indent
    text = " ".join(text.split())
    if not text.endswith("."):
        text += "."
    text = py_docstring(text)
    if len(pad) + len(text) + 6 <= 100:
        return f'{pad}"""{text}"""'
    words, row = text.split(), ""
    rows: list[str] = []
    for word in words:
        quotes = 0 if rows else 3  # the first row starts with the opening quotes
        if row and len(pad) + quotes + len(row) + 1 + len(word) > 100:
            rows.append(row)
            row = word
        else:
            row = f"{row} {word}" if row else word
    rows.append(row)
    if len(rows) == 1:  # fits the row but not the closing quotes: carry the last word
        first, _, last = row.rpartition(" ")
        rows = [first, last]
    body = "\n".join(f"{pad}{r}" for r in rows[1:])
    return f'{pad}"""{rows[0]}\n{body}\n{pad}"""'


def _ref(schema: Schema, name: str) -> str:
    return f"#/components/schemas/{component_name(schema, name)}"


def _parameters(schema: Schema, ref: RpcRef) -> list[Call]:
    in_path = set(ref.rpc.http.path_params) if ref.rpc.http else set()
    out: list[Call] = []
    for param in url_params(ref):
        spec = openapi_type_schema(param.type, param.validation, lambda n: _ref(schema, n))
        if param.name in in_path:
            out.append(
                Call("OpenApiParameter", [param.name, expr_of(spec), Raw("OpenApiParameter.PATH")])
            )
        else:
            required = not param.type.optional
            out.append(
                Call(
                    "OpenApiParameter",
                    [param.name, expr_of(spec)],
                    [("required", required)],
                )
            )
    if ref.rpc.paginated:
        out.append(Call("OpenApiParameter", ["cursor", expr_of(CURSOR_SCHEMA)]))
        limit = {"type": "integer", "format": "int32", "minimum": 1, "maximum": 200}
        out.append(Call("OpenApiParameter", ["limit", expr_of(limit)]))
    return out


def _responses(schema: Schema, ref: RpcRef, crud: CrudRpc | None = None) -> Dict:
    rpc = ref.rpc
    returned = Raw(f"s.{serializer_class(rpc.returns.name)}")
    ok = Call("PageOf", [returned]) if rpc.paginated else returned
    statuses: dict[int, str] = {}
    if url_params(ref) or body_params(ref) or rpc.paginated:
        statuses[400] = _OWN_STATUS[400]
    if _bearer(ref):
        statuses[401] = _OWN_STATUS[401]
        if rpc.auth is not None and rpc.auth.roles:
            statuses[403] = _OWN_STATUS[403]
    if body_params(ref):
        statuses[413] = _OWN_STATUS[413]
    if _check(ref):
        statuses[401] = _OWN_STATUS[401]
        statuses[403] = _OWN_STATUS[403]
        if _on_object(schema, ref):
            statuses[404] = "NOT_FOUND"
    if crud is not None and crud.kind in ("get", "update", "delete"):
        statuses[404] = "NOT_FOUND"
    if crud is not None and crud.kind in ("create", "update", "delete"):
        statuses[409] = "ABORTED"
    declared: dict[int, list[str]] = {}
    for error in rpc.errors:
        text = error.code.upper() + (f": {error.message}" if error.message else "")
        declared.setdefault(ERROR_STATUS.get(error.code, 500), []).append(text)
    for status, parts in declared.items():
        own = statuses.get(status)
        if own is not None and not any(p.split(":")[0] == own for p in parts):
            parts = [*parts, own]
        statuses[status] = "; ".join(parts)
    pairs: list[tuple[str, object]] = [
        ("200", Call("OpenApiResponse", [ok], [("description", "OK")]))
    ]
    for status in sorted(statuses):
        pairs.append(
            (str(status), Call("OpenApiResponse", [], [("description", statuses[status])]))
        )
    return _IntDict(pairs)


class _IntDict(Dict):
    """A dict literal with integer keys (status codes)."""

    def _flat(self) -> str:
        """Return ``{200: ...}`` on one line."""
        return "{" + ", ".join(f"{k}: {expr_of(v).flat()}" for k, v in self.pairs) + "}"

    def parts(self):  # type: ignore[no-untyped-def]
        """Split between the braces."""
        items = [(f"{k}: ", expr_of(v)) for k, v in self.pairs]
        return ("{", "}", items, self.explode) if items else None


def _method(schema: Schema, ref: RpcRef, sv: ServiceViews) -> str:
    rpc = ref.rpc
    crud = sv.crud.get(ref.handler)
    kwargs: list[tuple[str, object]] = [
        ("operation_id", ref.operation_id),
        ("tags", List([ref.service.name])),
    ]
    described = " ".join(rpc.doc.split())
    if rpc.auth is not None and rpc.auth.roles:
        described = " ".join(filter(None, [described, roles_description(rpc.auth.roles)]))
    if described:
        kwargs.append(("description", described))
    parameters = _parameters(schema, ref)
    if parameters:
        kwargs.append(("parameters", List(parameters)))
    body = body_params(ref)
    if ref.method in ("POST", "PUT", "PATCH"):
        kwargs.append(("request", Raw(f"s.{request_class(ref)}") if body else Raw("None")))
    kwargs.append(("responses", _responses(schema, ref, crud)))
    extensions: list[tuple[str, object]] = []
    if rpc.auth is not None and rpc.auth.roles:
        extensions.append(("x-roles", List(list(rpc.auth.roles))))
    if rpc.permission is not None:
        # the compiled document's value, so the served one agrees with it
        extensions.append(("x-permission", expr_of(permission_extension(rpc.permission))))
    if extensions:
        kwargs.append(("extensions", Dict(extensions)))
    decorator = "    @" + render(Call("extend_schema", [], kwargs), 1, 1)
    signature = f"    def {ref.handler}(self, request: Request, **path: str) -> HttpResponse:"
    lines = [decorator, signature, _doc(rpc.doc or f"{ref.service.name}.{rpc.name}.", 8)]
    call_args: list[str] = ["request"]
    params = url_params(ref)
    if params:
        lines.append(f"        params = self.params(request, s.{params_class(ref)}, path)")
    if body:
        if params:
            lines.append(f"        params.update(self.body(request, s.{request_class(ref)}))")
        else:
            lines.append(f"        params = self.body(request, s.{request_class(ref)})")
    target = _on_object(schema, ref)
    if target is not None:
        assert rpc.permission is not None and rpc.permission.resource is not None
        model = f"models.{rpc.permission.resource}"
        lines.append(f'        self.authorize(request, {model}, params["{target}"])')
    if rpc.paginated:
        lines.append("        cursor, limit = self.page(request)")
        call_args += ["cursor=cursor", "limit=limit"]
    if params or body:
        call_args.append("**params")
    handler = Call(f"{sv.handlers}().{ref.handler}", [Raw(a) for a in call_args])
    result = "page" if rpc.paginated else "result"
    lines.append(assign(result, handler, indent=2))
    respond = "respond_page" if rpc.paginated else "respond"
    lines.append(f"        return self.{respond}({result}, s.{serializer_class(rpc.returns.name)})")
    return "\n".join(lines)

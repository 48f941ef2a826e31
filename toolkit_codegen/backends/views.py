"""The ``views`` backend: DRF views in ``generated/views.py``, one per schema path.

Each view is a ``toolkit_batteries.codegen.views.GeneratedView`` with one method per rpc
bound to its path. A method validates the request, calls the user's handler
(``handlers.<Service>().<rpc_snake_case>(request, **params)`` in ``<app>/handlers.py``) and
serialises what it returns: no business logic. Its ``extend_schema`` gives drf-spectacular
what the compiled ``openapi.json`` says (operationId ``<Service>_<Rpc>``, parameters,
request component, ``200 OK`` with the returned type, one response per ``errors:`` status,
``bearerAuth`` via the view's authentication), plus the statuses the view itself answers
(400, 401, 403, 413), so a client or a fuzzer knows every status it may see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..nodes import ERROR_STATUS, Diagnostic, Schema
from . import BackendError, BackendOptions
from ._django_code import Call, Dict, List, Raw, assign, expr_of, render, sorted_all
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
from ._jsonschema import openapi_type_schema
from .models import package_init
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
    views: set[str] = set()
    names: set[str] = set()
    for route in sorted(ordered, key=lambda r: r.path):
        route.view = _unique(view_class_name(route.path), views, lambda n, i: f"{n[:-4]}{i}View")
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


def render_views(schema: Schema) -> str:
    """Return the text of ``generated/views.py``."""
    all_routes = routes(schema, "views")
    uses_bearer = any(_bearer(r) for route in all_routes for r in route.rpcs)
    uses_public = any(not _bearer(r) for route in all_routes for r in route.rpcs)
    runtime = ["GeneratedView", "extend_schema"]
    if uses_bearer:
        runtime.insert(0, "Bearer")
    if any(r.rpc.paginated for route in all_routes for r in route.rpcs):
        runtime.append("PageOf")
    if uses_public:
        runtime.append("Public")
    uses_params = any(url_params(r) or r.rpc.paginated for route in all_routes for r in route.rpcs)
    spectacular = ["OpenApiResponse"]
    if uses_params:
        spectacular.insert(0, "OpenApiParameter")
    out = [
        PY_HEADER,
        '"""DRF views of the schema\'s rpcs: validate the request, call the handler, serialise.',
        "",
        "Business logic lives in the app's ``handlers.py``; these views only bind it to HTTP.",
        '"""',
        "",
        "from django.http import HttpResponse",
        f"from drf_spectacular.utils import {', '.join(spectacular)}",
        "from rest_framework.request import Request",
        f"from toolkit_batteries.codegen.views import {', '.join(sorted_all(runtime))}",
        "",
        "from .. import handlers",
        "from . import serializers as s",
        "",
        assign("__all__", List(sorted(["AppView", *(r.view for r in all_routes)]))),
        "",
        "",
        "class AppView(GeneratedView):",
        '    """The base of this app\'s generated views: it knows every schema component."""',
        "",
        "    components = s.COMPONENTS",
        "    enum_components = s.ENUMS",
    ]
    for route in all_routes:
        out += ["", "", _view(schema, route)]
    return "\n".join(out) + "\n"


def _bearer(ref: RpcRef) -> bool:
    return ref.rpc.auth is not None and ref.rpc.auth.required


def _view(schema: Schema, route: Route) -> str:
    verbs = [r.method for r in route.rpcs]
    listed = verbs[0] if len(verbs) == 1 else ", ".join(verbs[:-1]) + " and " + verbs[-1]
    doc = _doc(f"{listed} {route.path}.", 4)
    rpcs = Dict([(r.method.lower(), f"{r.service.name}.{r.rpc.name}") for r in route.rpcs])
    auth = Dict([(r.method.lower(), _auth_expr(r)) for r in route.rpcs])
    lines = [
        f"class {route.view}(AppView):",
        doc,
        "",
        assign("rpcs", rpcs, indent=1),
        assign("auth", auth, indent=1),
    ]
    for ref in route.rpcs:
        lines += ["", _method(schema, ref)]
    return "\n".join(lines)


def _auth_expr(ref: RpcRef) -> Call:
    if not _bearer(ref):
        return Call("Public")
    assert ref.rpc.auth is not None
    return Call("Bearer", list(ref.rpc.auth.roles))


def _doc(text: str, indent: int) -> str:
    pad = " " * indent
    text = " ".join(text.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text.endswith("."):
        text += "."
    if len(pad) + len(text) + 6 <= 100:
        return f'{pad}"""{text}"""'
    words, rows, row = text.split(), [], ""
    for word in words:
        if row and len(pad) + len(row) + 1 + len(word) > 100:
            rows.append(row)
            row = word
        else:
            row = f"{row} {word}" if row else word
    rows.append(row)
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
        out.append(Call("OpenApiParameter", ["cursor", expr_of({"type": "string"})]))
        limit = {"type": "integer", "format": "int32", "minimum": 1, "maximum": 200}
        out.append(Call("OpenApiParameter", ["limit", expr_of(limit)]))
    return out


def _responses(schema: Schema, ref: RpcRef) -> Dict:
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


def _method(schema: Schema, ref: RpcRef) -> str:
    rpc = ref.rpc
    kwargs: list[tuple[str, object]] = [
        ("operation_id", ref.operation_id),
        ("tags", List([ref.service.name])),
    ]
    if rpc.doc:
        kwargs.append(("description", " ".join(rpc.doc.split())))
    parameters = _parameters(schema, ref)
    if parameters:
        kwargs.append(("parameters", List(parameters)))
    body = body_params(ref)
    if ref.method in ("POST", "PUT", "PATCH"):
        kwargs.append(("request", Raw(f"s.{request_class(ref)}") if body else Raw("None")))
    kwargs.append(("responses", _responses(schema, ref)))
    if rpc.auth is not None and rpc.auth.roles:
        kwargs.append(("extensions", Dict([("x-roles", List(list(rpc.auth.roles)))])))
    decorator = "    @" + render(Call("extend_schema", [], kwargs), 1, 1)
    name = ref.method.lower()
    signature = f"    def {name}(self, request: Request, **path: str) -> HttpResponse:"
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
    if rpc.paginated:
        lines.append("        cursor, limit = self.page(request)")
        call_args += ["cursor=cursor", "limit=limit"]
    if params or body:
        call_args.append("**params")
    handler = Call(f"handlers.{ref.service.name}().{ref.handler}", [Raw(a) for a in call_args])
    result = "page" if rpc.paginated else "result"
    lines.append(assign(result, handler, indent=2))
    respond = "respond_page" if rpc.paginated else "respond"
    lines.append(f"        return self.{respond}({result}, s.{serializer_class(rpc.returns.name)})")
    return "\n".join(lines)

"""The user's side of a Django app: ``handlers.py`` stubs and the app's ``models.py``.

Unlike the generated modules, these files belong to the user. ``manage.py
compile_schema`` creates them once; after that it only *appends*: a stub method for each
new rpc of an existing service class, a stub class for each new service, and the import
lines those stubs need. Existing text is never changed, so hand-written handlers survive
every compile.

A handler is one class per service with one method per rpc, in snake_case::

    class UserService:
        def create_user(self, request: Request, *, email: str, name: str) -> models.User:
            raise NotImplementedError

It gets the DRF request and the rpc's validated parameters as keyword arguments
(paginated rpcs also ``cursor`` and ``limit``) and returns the entity (a model instance),
a message (a dict), or a ``Page(items, next_cursor)``. A stub's ``NotImplementedError``
answers 501 ``unimplemented``. A plain CRUD rpc (:mod:`.crud`) gets no stub: the
generated ORM default runs until the class defines a method of that name.
"""

from __future__ import annotations

import ast
import re

from ..escaping import py_docstring, py_identifier
from ..nodes import (
    Diagnostic,
    Position,
    Rpc,
    Schema,
    Service,
    access_text,
    enforced_access,
)
from ..pysource import Call, Raw, render
from . import BackendError
from ._django_common import all_services, handler_name, python_type, return_type
from .crud import rpc_is_crud

__all__ = ["append_stubs", "render_app_models", "render_handlers"]

#: Import line -> the names it binds.
_IMPORTS: dict[str, tuple[str, ...]] = {
    "import datetime": ("datetime",),
    "import uuid": ("uuid",),
    "from typing import Any": ("Any",),
    "from rest_framework.request import Request": ("Request",),
    "from toolkit_batteries.http.pagination import Page": ("Page",),
    "from . import models": ("models",),
}
#: Import groups as isort orders them in a project (toolkit is a third-party package).
_GROUPS = (
    ("import datetime", "import uuid", "from typing import Any"),
    (
        "from rest_framework.request import Request",
        "from toolkit_batteries.http.pagination import Page",
    ),
    ("from . import models",),
)


def render_app_models(app_label: str) -> str:
    """Return the app's ``models.py``: the generated models, and room for the user's."""
    return (
        f'"""Models of the {app_label} app.\n\n'
        "The schema's entities are generated into ``generated/models.py`` (rewritten by\n"
        "``manage.py compile_schema``); hand-written models go below.\n"
        '"""\n\n'
        "try:\n"
        "    from .generated.models import *  # noqa: F403\n"
        "except ModuleNotFoundError as exc:\n"
        "    # Not compiled yet: `manage.py compile_schema` writes generated/ (and needs\n"
        "    # Django, so it must start without it). Any other missing module is an error.\n"
        '    if exc.name not in (f"{__package__}.generated", f"{__package__}.generated.models"):\n'
        "        raise\n"
    )


def _signature(schema: Schema, rpc: Rpc) -> tuple[str, set[str]]:
    """Return the ``def`` line of an rpc's handler and the names its annotations use."""
    params = [Raw("self"), Raw("request: Request")]
    annotations = [python_type(schema, p.type) for p in rpc.params]
    keyword_only = [f"{p.name}: {a}" for p, a in zip(rpc.params, annotations, strict=True)]
    if rpc.paginated:
        keyword_only += ["cursor: str | None", "limit: int"]
    if keyword_only:
        params += [Raw("*"), *(Raw(k) for k in keyword_only)]
    returns = return_type(schema, rpc)
    tail = f" -> {returns}:"
    name = py_identifier(handler_name(rpc), "handler method")
    text = "    " + render(Call(f"def {name}", params), 1, 0, len(tail)) + tail
    used = {"Request", returns.split(".")[0]}
    for annotation in annotations:
        used |= set(re.findall(r"\b(datetime|uuid|Any)\b", annotation))
    return text, used


def _method(schema: Schema, service: Service, rpc: Rpc) -> tuple[str, set[str]]:
    signature, used = _signature(schema, rpc)
    # Auth as the view enforces it: a permission check authenticates too.
    access = enforced_access(rpc)
    docs = []
    if rpc.http is not None:
        route = f"{rpc.http.method.upper()} {rpc.http.path}"
        docs.append(f"{route} (auth: {access_text(rpc)})")
        docs.append(f"{route} (auth: {access['auth']})")
    # The path is schema text: it reaches the file only through the docstring escaper.
    doc = f'        """{service.name}.{rpc.name}."""'
    for where in docs:
        candidate = f'        """{py_docstring(f"{service.name}.{rpc.name}: {where}.")}"""'
        if len(candidate) <= 100:
            doc = candidate
            break
    return "\n".join([signature, doc, "        raise NotImplementedError"]), used


def _class(
    schema: Schema, service: Service, rpcs: list[Rpc], crud: list[Rpc]
) -> tuple[str, set[str]]:
    used: set[str] = set()
    name = py_identifier(service.name, "service")
    lines = [f"class {name}:", f'    """The {name} rpcs."""']
    if crud:
        names = ", ".join(handler_name(r) for r in crud)
        lines[1:] = [
            f'    """The {service.name} rpcs.',
            "",
            *_wrap(
                f"Plain CRUD rpcs run the generated ORM defaults ({names}); define a "
                "method of the same name here to replace one.",
                4,
            ),
            '    """',
        ]
        if not rpcs:
            return "\n".join(lines), used
    for rpc in rpcs:
        text, names = _method(schema, service, rpc)
        used |= names
        lines += ["", text]
    return "\n".join(lines), used


def _split(schema: Schema, module: object, service: Service) -> tuple[list[Rpc], list[Rpc]]:
    """Return a service's rpcs that need a stub, and its plain CRUD rpcs (no stub)."""
    stubbed: list[Rpc] = []
    crud: list[Rpc] = []
    for rpc in service.rpcs:
        (crud if rpc_is_crud(schema, module, service, rpc) else stubbed).append(rpc)
    return stubbed, crud


def _wrap(text: str, indent: int) -> list[str]:
    pad, rows, row = " " * indent, [], ""
    for word in text.split():
        if row and indent + len(row) + 1 + len(word) > 92:
            rows.append(pad + row)
            row = word
        else:
            row = f"{row} {word}" if row else word
    return [*rows, pad + row]


def _import_block(names: set[str]) -> str:
    groups = []
    for group in _GROUPS:
        lines = [line for line in group if set(_IMPORTS[line]) & names]
        if lines:
            groups.append("\n".join(lines))
    return "\n\n".join(groups)


def render_handlers(schema: Schema, app_label: str) -> str:
    """Return a new ``handlers.py`` with a stub per service and rpc."""
    blocks: list[str] = []
    used: set[str] = set()
    for module, service in all_services(schema):
        text, names = _class(schema, service, *_split(schema, module, service))
        blocks.append(text)
        used |= names
    header = [
        f'"""Handlers of the {app_label} app: the business logic behind the schema\'s rpcs.',
        "",
        "``manage.py compile_schema`` created this file and appends a stub for each new rpc;",
        "it never changes what is written here. A method gets the DRF request and the rpc's",
        "validated parameters, and returns the entity (a model instance), a message (a dict)",
        "or, for a paginated rpc, ``Page(items, next_cursor)``. Raise",
        "``toolkit_batteries.http.ApiError`` for an error response; a stub answers 501.",
        '"""',
        "",
        "from __future__ import annotations",
    ]
    imports = _import_block(used)
    out = "\n".join(header) + ("\n\n" + imports if imports else "")
    for block in blocks:
        out += "\n\n\n" + block
    return out + "\n"


def append_stubs(schema: Schema, text: str, display: str = "handlers.py") -> str | None:
    """Return ``text`` with stubs for the rpcs it lacks (None when nothing is missing).

    Missing methods are inserted at the end of their service's class, missing classes at
    the end of the file, missing imports after the last top-level import. Raises
    :class:`BackendError` when ``text`` is not valid Python (nothing can be placed safely).
    """
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        pos = Position(display, exc.lineno or 1, exc.offset or 1)
        message = f"cannot add handler stubs: invalid Python ({exc.msg})"
        raise BackendError([Diagnostic(pos, "handlers", message)]) from None
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    lines = text.splitlines()
    inserts: list[tuple[int, str]] = []  # (after this 1-based line, text)
    appended: list[str] = []
    used: set[str] = set()
    for module, service in all_services(schema):
        node = classes.get(service.name)
        stubbed, crud = _split(schema, module, service)
        if node is None:
            block, names = _class(schema, service, stubbed, crud)
            appended.append(block)
            used |= names
            continue
        have = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        missing = [r for r in stubbed if handler_name(r) not in have]
        for rpc in missing:
            method, names = _method(schema, service, rpc)
            inserts.append((node.end_lineno or len(lines), "\n" + method))
            used |= names
    if not inserts and not appended:
        return None
    bound = _bound_names(tree)
    new_imports = [line for line in _IMPORTS if set(_IMPORTS[line]) & (used - bound)]
    if new_imports:
        last = max(
            (n.end_lineno or 0 for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))),
            default=_docstring_end(tree),
        )
        inserts.append((last, "\n".join(new_imports)))
    for after, chunk in sorted(inserts, key=lambda item: item[0], reverse=True):
        lines[after:after] = chunk.split("\n")
    out = "\n".join(lines).rstrip("\n")
    for block in appended:
        out += "\n\n\n" + block
    return out + "\n"


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
    return names


def _docstring_end(tree: ast.Module) -> int:
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first.end_lineno or 0
    return 0

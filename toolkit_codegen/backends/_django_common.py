"""Names and lookups the five Django backends share.

Every Django backend returns paths relative to the Django app directory (``api/``):
``generated/models.py``, ``generated/serializers.py``, ``generated/views.py``,
``generated/urls.py`` and ``migrations/NNNN_name.py``. They agree on class names, on the
drf-spectacular component names (``<moduleLabel>_<Name>``, as the merged OpenAPI document
of the ``openapi`` backend spells them) and on the handler method names, through here.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..nodes import Diagnostic, Module, Position, Rpc, Schema, Service, TypeRef, snake_case
from . import GENERATED_NOTICE, BackendError, entity_named, module_named, per_schema

__all__ = [
    "BODY_METHODS",
    "PY_HEADER",
    "RpcRef",
    "all_services",
    "check_names",
    "check_unique_services",
    "component_name",
    "handler_name",
    "http_rpcs",
    "python_type",
    "request_component_name",
    "return_type",
    "route_of",
    "route_sort_key",
    "url_name",
    "view_class_name",
]

#: The first line of every generated Python file.
PY_HEADER = f"# {GENERATED_NOTICE}"
#: Methods whose non-path parameters are JSON body members (DESIGN.md).
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

_PATH_PARAM = re.compile(r"\{([^{}]*)\}")

#: Scalar -> the Python type a handler receives (DRF's validated values).
_PY_SCALARS = {
    "uuid": "uuid.UUID",
    "string": "str",
    "bool": "bool",
    "bytes": "bytes",
    "json": "Any",
    "int32": "int",
    "int64": "int",
    "float32": "float",
    "float64": "float",
    "timestamp": "datetime.datetime",
    "date": "datetime.date",
}


@dataclass(frozen=True, slots=True)
class RpcRef:
    """An rpc with the service and module that declare it."""

    module: Module
    service: Service
    rpc: Rpc

    @property
    def operation_id(self) -> str:
        """Return ``<Service>_<Rpc>``, the OpenAPI operationId."""
        return f"{self.service.name}_{self.rpc.name}"

    @property
    def method(self) -> str:
        """Return the upper-case HTTP method."""
        assert self.rpc.http is not None
        return self.rpc.http.method.upper()

    @property
    def path(self) -> str:
        """Return the declared path template (``/v1/users/{id}``)."""
        assert self.rpc.http is not None
        return self.rpc.http.path

    @property
    def handler(self) -> str:
        """Return the handler method name (``create_user``)."""
        return handler_name(self.rpc)


def handler_name(rpc: Rpc) -> str:
    """Return the snake_case handler method of an rpc (``CreateUser`` -> ``create_user``)."""
    return snake_case(rpc.name)


def http_rpcs(schema: Schema) -> list[RpcRef]:
    """Return every rpc with an ``http:`` binding, in declaration order."""
    return [
        RpcRef(module, service, rpc)
        for module in schema.modules
        for service in module.services
        for rpc in service.rpcs
        if rpc.http is not None
    ]


def all_services(schema: Schema) -> Iterator[tuple[Module, Service]]:
    """Yield every service with its module, in declaration order."""
    for module in schema.modules:
        for service in module.services:
            yield module, service


def check_unique_services(schema: Schema, phase: str) -> None:
    """Raise :class:`BackendError` when two modules declare a service of the same name.

    Handlers are one Python class per service, so service names must be unique across
    the app even though the schema language scopes them per module.
    """
    seen: dict[str, Module] = {}
    problems: list[Diagnostic] = []
    for module, service in all_services(schema):
        first = seen.setdefault(service.name, module)
        if first is not module:
            problems.append(
                Diagnostic(
                    service.pos,
                    phase,
                    f"service {service.name} is declared in modules {first.label} and "
                    f"{module.label}; one Django app needs unique service names",
                )
            )
    if problems:
        raise BackendError(problems)


#: Module-level names the generated class bodies read (models.py, serializers.py, the
#: views' parameter serializers): a field of that name would rebind it for the fields
#: after it (``models = models.CharField(...)``), and the module would fail on import.
_CLASS_BODY_NAMES = frozenset(
    {"models", "uuid", "timezone", "Now", "serializers", "fields", "extend_schema_serializer"}
)
#: What Django's ``Model`` and its metaclass give every model: a field of that name
#: replaces the method or the manager (``delete``, ``objects``) or the ``Meta`` options.
_MODEL_NAMES = frozenset(
    {
        *("Meta", "objects", "save", "delete", "clean", "check", "full_clean", "clean_fields"),
        *("refresh_from_db", "from_db", "validate_unique", "validate_constraints", "asave"),
        *("adelete", "arefresh_from_db", "serializable_value", "get_deferred_fields"),
        *("save_base", "prepare_database_save", "date_error_message", "unique_error_message"),
        *("get_constraints",),
    }
)
#: A handler method's own parameters (``def get(self, request, *, id)``).
_HANDLER_NAMES = frozenset({"self", "request"})


def _bad_name(name: str, *, model: bool = False) -> str | None:
    """Return why ``name`` cannot be a Python/Django attribute (of a model), or None."""
    if keyword.iskeyword(name):
        return "is a Python keyword"
    if name in _CLASS_BODY_NAMES:
        return "would hide a name the generated classes use"
    if model and name in _MODEL_NAMES:
        return "would replace an attribute every Django model has"
    if name == "pk":
        return "is reserved by Django (the primary-key alias)"
    if name.endswith("_") or "__" in name:
        return "cannot end with '_' or contain '__' (Django field names)"
    return None


def check_names(schema: Schema, phase: str) -> None:
    """Raise :class:`BackendError` for names Python or Django cannot use as attributes.

    Fields become model and serializer attributes, parameters become handler keyword
    arguments, rpc names become handler methods (``CreateUser`` -> ``create_user``).
    Every Django backend runs it on the same schema: the walk is done once per schema and
    only the phase differs.
    """
    problems = [Diagnostic(pos, phase, message) for pos, message in _name_problems(schema)]
    if problems:
        raise BackendError(problems)
    check_unique_services(schema, phase)


@per_schema
def _name_problems(schema: Schema) -> list[tuple[Position, str]]:
    """Return ``(position, message)`` of every name :func:`check_names` refuses."""
    problems: list[tuple[Position, str]] = []

    def check(name: str, what: str, pos: Position, *, model: bool = False) -> None:
        why = _bad_name(name, model=model)
        if why is not None:
            problems.append((pos, f"{what} {name} {why}; rename it for the Django backends"))

    for entity in schema.entities:
        for f in entity.fields:
            check(f.name, "field", f.pos, model=True)
        for rel in entity.relations:
            check(rel.name, "relation", rel.pos, model=True)
    for message in schema.messages:
        for f in message.fields:
            check(f.name, "field", f.pos)
    for _, service in all_services(schema):
        for rpc in service.rpcs:
            check(handler_name(rpc), "handler method", rpc.pos)
            for param in rpc.params:
                if param.name in _HANDLER_NAMES:
                    message = (
                        f"parameter {param.name} is a parameter every handler method has; "
                        "rename it for the Django backends"
                    )
                    problems.append((param.pos, message))
                else:
                    check(param.name, "parameter", param.pos)
    declared = {n.name for n in (*schema.entities, *schema.messages, *schema.enums)}
    for owner in (*schema.entities, *schema.messages):
        for f in owner.fields:
            if f.name in declared:  # a class the same module defines (enum choices)
                message = (
                    f"field {f.name} has the name of a declared type, which the generated "
                    "classes use; rename it for the Django backends"
                )
                problems.append((f.pos, message))
    return problems


def component_name(schema: Schema, name: str) -> str:
    """Return the drf-spectacular component of a declared type: ``<moduleLabel>_<Name>``."""
    module = module_named(schema, name)
    return f"{module.label if module else 'default'}_{name}"


def request_component_name(ref: RpcRef) -> str:
    """Return the request-body component of an rpc: ``<label>_<Service><Rpc>Request``."""
    return f"{ref.module.label}_{ref.service.name}{ref.rpc.name}Request"


def route_of(path: str) -> str:
    """Return the Django route of a schema path (``/v1/users/{id}`` -> ``v1/users/<str:id>``)."""
    return _PATH_PARAM.sub(lambda m: f"<str:{m.group(1)}>", path.lstrip("/"))


def route_sort_key(path: str) -> tuple[tuple[int, str], ...]:
    """Order routes so literal segments win over parameters (``/users/me`` before ``{id}``)."""
    key: list[tuple[int, str]] = []
    for segment in path.strip("/").split("/"):
        key.append((1, "") if _PATH_PARAM.search(segment) else (0, segment))
    return (*key, (2, path))


def view_class_name(path: str) -> str:
    """Return the view class of a path (``/v1/users/{id}`` -> ``V1UsersIdView``)."""
    words = re.findall(r"[A-Za-z0-9]+", path)
    name = "".join(w[:1].upper() + w[1:] for w in words) or "Root"
    if name[0].isdigit():
        name = f"Path{name}"
    return f"{name}View"


def url_name(path: str) -> str:
    """Return the URL name of a path (``/v1/users/{id}`` -> ``v1_users_id``)."""
    words = re.findall(r"[A-Za-z0-9]+", path)
    return "_".join(w.lower() for w in words) or "root"


def python_type(schema: Schema, typ: TypeRef) -> str:
    """Return the annotation a handler parameter of ``typ`` gets."""
    if typ.is_list:
        text = f"list[{python_type(schema, typ.element)}]"
        return f"{text} | None" if typ.optional else text
    if typ.is_scalar:
        text = _PY_SCALARS[typ.name]
    elif typ.is_inline_enum or schema.enum(typ.name) is not None:
        text = "str"
    else:
        text = "dict[str, Any]"
    return f"{text} | None" if typ.optional else text


def return_type(schema: Schema, rpc: Rpc) -> str:
    """Return the annotation of a handler's result."""
    if rpc.paginated:
        return "Page"
    if entity_named(schema, rpc.returns.name) is not None:
        return f"models.{rpc.returns.name}"
    return "Any"

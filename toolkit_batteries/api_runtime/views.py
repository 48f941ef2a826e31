"""The base of generated viewsets: validate, call the handler, serialise, answer errors.

A generated ``<app>/generated/views.py`` holds one :class:`GeneratedViewSet` subclass per
schema service (``NoteServiceViewSet``), one action method per rpc, named like the
handler; ``generated/urls.py`` binds each path's methods to actions with
``as_view({"get": "list_notes", "post": "create_note"})``. An action reads like the rpc::

    def create_user(self, request: Request, **path: str) -> HttpResponse:
        params = self.body(request, s.UserServiceCreateUserRequestSerializer)
        result = UserServiceHandlers().create_user(request, **params)
        return self.respond(result, s.UserSerializer)

This module holds what those lines need, so generated code never carries logic:

- ``auth = {"create_user": Public(), "get_user": Bearer("admin")}`` picks, per action, no
  authentication (``AllowAny``) or ``toolkit_batteries.auth.drf.BearerAuthentication`` with
  ``BearerRequired`` and the rpc's roles (401 without a valid bearer token, 403 without a
  role); ``checks = {"edit_note": Check("note.edit", on_object=True, owner_field="owner",
  read="note.read")}`` adds the permission battery's ``HasPermission`` (403 when
  ``services.permission()`` refuses; :meth:`GeneratedViewSet.authorize` decides on the
  loaded object, comparing ``owner_field``, and answers an unknown id's 404 to a caller
  who may not ``read`` it). A checked rpc's ``auth`` entry is ``Bearer()``: it needs a
  token, and the system check ``toolkit_permission.E004`` refuses ``noop`` in production.
- :meth:`GeneratedViewSet.params` / :meth:`GeneratedViewSet.body` validate path and query
  parameters / the JSON body (1 MiB cap: 413; bad JSON or invalid fields: 400 with
  ``fields``) and return one value per rpc parameter (``None`` for an absent optional one).
- :meth:`GeneratedViewSet.page` reads ``cursor`` and ``limit`` (default 50, at most 200);
  :meth:`GeneratedViewSet.respond` answers 200 with the serialised result and
  :meth:`GeneratedViewSet.respond_page` with ``{"items": [...], "next_cursor": ...}``.
  Cursors are signed: the handler's ``next_cursor`` leaves with an HMAC of
  ``SECRET_KEY`` (:func:`sign_cursor`), and a cursor that comes back altered or forged is
  a 400 on field ``cursor`` before the handler runs, which gets the cursor it wrote.
- Errors use ``toolkit_batteries.http``'s shape whatever the project's
  ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``: a handler raises ``ApiError`` for 4xx, and a
  handler stub's ``NotImplementedError`` answers 501 ``unimplemented``.
- :func:`with_defaults` puts the generated CRUD implementations
  (:mod:`toolkit_batteries.api_runtime.crud`) under the user's handler class.
- :class:`GeneratedSchema` makes drf-spectacular describe the actions as the compiled
  ``openapi.json`` does (components, paginated envelope, ``bearerAuth`` security).

A viewset's :meth:`~GeneratedViewSet.dispatch` does what ``APIView.dispatch`` does, minus
the work a JSON-only, per-action-authenticated endpoint never needs (content
negotiation, an ``Allow`` header rebuilt per request, DRF's response finalisation on a
plain ``HttpResponse``), so a viewset costs no more per request than a plain ``APIView``.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, update_wrapper
from typing import Any, ClassVar

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Model
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema as spectacular_extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.fields import (
    CharField,
    DateTimeField,
    Field,
    JSONField,
    SkipField,
    UUIDField,
    empty,
    get_error_detail,
)
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer, Serializer
from rest_framework.settings import ISO_8601, api_settings
from rest_framework.viewsets import ViewSet

from toolkit_batteries.http import ApiError, read_json
from toolkit_batteries.http.drf import exception_handler
from toolkit_batteries.http.pagination import parse_limit

from .fields import (
    JSON_VALUE_SCHEMA,
    EnumField,
    GreaterThanValidator,
    LessThanValidator,
    TimestampField,
)

__all__ = [
    "Bearer",
    "Check",
    "GeneratedSchema",
    "GeneratedViewSet",
    "PageOf",
    "Public",
    "extend_schema",
    "with_defaults",
]

JSON_MEDIA = "application/json"


@dataclass(frozen=True, slots=True)
class Public:
    """``auth: none``: no authentication, anyone may call."""


@dataclass(frozen=True, init=False, slots=True)
class Bearer:
    """``auth: required`` (``Bearer()``) or ``auth: required(roles: {a})`` (``Bearer("a")``)."""

    roles: tuple[str, ...]

    def __init__(self, *roles: str) -> None:
        object.__setattr__(self, "roles", tuple(roles))


_PUBLIC = Public()
_JSON = JSONRenderer()
_PARSERS = (JSONParser(),)
_NEGOTIATOR = DefaultContentNegotiation()


@dataclass(frozen=True, slots=True)
class PageOf:
    """A paginated response of ``item`` serializers (for ``extend_schema``)."""

    item: type[BaseSerializer]


class GeneratedSchema(AutoSchema):
    """drf-spectacular's AutoSchema, made to describe generated views like ``openapi.json``.

    - Every entity, message and named enum of the app (the view's ``components`` and
      ``enum_components``) is registered, used by an operation or not, as the compiled
      document lists them all.
    - A :class:`PageOf` response is ``{items: [<ref>], next_cursor: string|null}``, inline.
    - ``auth: none`` operations carry no ``security`` key (not ``[{}]``).
    - Responses are never wrapped in a list: a view is not a list view.
    - A PATCH body is the full request component, not a partial ``Patched<Name>``.
    - What the server enforces beyond drf-spectacular's view is stated: a string's NUL
      refusal (its field's ``openapi_extra`` pattern) and ``@validate(gt:, lt:)`` exclusive
      bounds, so the document allows exactly what the serializers accept.
    """

    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> Any:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, JSONField) and not field.allow_null and isinstance(schema, dict):
            schema = {**JSON_VALUE_SCHEMA, **schema}  # not null: DRF refuses it
        return schema

    def _insert_field_validators(self, field: Any, schema: dict[str, Any]) -> None:
        super()._insert_field_validators(field, schema)
        schema.update(getattr(field, "openapi_extra", {}))
        for validator in field.validators:
            if isinstance(validator, GreaterThanValidator):
                schema["minimum"] = validator.limit_value
                schema["exclusiveMinimum"] = True
            elif isinstance(validator, LessThanValidator):
                schema["maximum"] = validator.limit_value
                schema["exclusiveMaximum"] = True

    def get_operation(
        self, path: str, path_regex: str, path_prefix: str, method: str, registry: Any
    ) -> dict[str, Any] | None:
        """Register the app's components, then build the operation as usual."""
        self.registry = registry
        self.path, self.path_regex, self.method = path, path_regex, method.upper()
        for serializer in getattr(self.view, "components", ()):
            self.resolve_serializer(serializer, "response")
        for name, values in getattr(self.view, "enum_components", {}).items():
            schema = {"type": "string", "enum": list(values)}
            component = ResolvedComponent(
                name=name,
                type=ResolvedComponent.SCHEMA,
                object=EnumField(values, component=name),
                schema=schema,
            )
            registry.register_on_missing(component)
        return super().get_operation(path, path_regex, path_prefix, method, registry)

    def _get_request_for_media_type(self, serializer: Any, direction: Any = "request") -> Any:
        # A generated PATCH validates its whole body (members = rpc parameters), so it is
        # not drf-spectacular's partial "Patched<Name>" component.
        method = self.method
        self.method = "POST" if method == "PATCH" else method
        try:
            return super()._get_request_for_media_type(serializer, direction)
        finally:
            self.method = method

    def _is_list_view(self, serializer: Any = None) -> bool:
        del serializer
        return False

    def get_auth(self) -> list[dict[str, Any]]:
        """Return the security requirements without DRF's "anonymous allowed" ``{}``."""
        return [requirement for requirement in super().get_auth() if requirement]

    def _get_response_for_code(
        self,
        serializer: Any,
        status_code: str,
        media_types: Any = None,
        direction: Any = "response",
    ) -> dict[str, Any]:
        response = serializer.response if isinstance(serializer, OpenApiResponse) else serializer
        if not isinstance(response, PageOf):
            return super()._get_response_for_code(serializer, status_code, media_types, direction)
        item = self.resolve_serializer(response.item, direction)
        schema = {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": item.ref},
                "next_cursor": {"type": "string", "nullable": True},
            },
            "required": ["items", "next_cursor"],
        }
        description = serializer.description if isinstance(serializer, OpenApiResponse) else ""
        return {"content": {JSON_MEDIA: {"schema": schema}}, "description": description or "OK"}


def extend_schema(**kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Return drf-spectacular's ``extend_schema`` decorator built on :class:`GeneratedSchema`.

    drf-spectacular bases a method's schema on ``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``
    when it decorates it; starting from :class:`GeneratedSchema` instead keeps the served
    document right in a project that never set that setting.
    """
    decorate = spectacular_extend_schema(**kwargs)

    def decorator(method: Callable[..., Any]) -> Callable[..., Any]:
        method.kwargs = {"schema": GeneratedSchema}  # type: ignore[attr-defined]
        return decorate(method)

    return decorator


class BearerAuthScheme(OpenApiAuthenticationExtension):
    """Name ``BearerAuthentication`` ``bearerAuth`` (HTTP bearer), as ``openapi.json`` does."""

    target_class = "toolkit_batteries.auth.drf.BearerAuthentication"
    name = "bearerAuth"
    match_subclasses = True
    priority = 1

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        """Return the HTTP bearer scheme."""
        del auto_schema
        return {"type": "http", "scheme": "bearer"}


class GeneratedViewSet(ViewSet):
    """The base class of every generated viewset (see the module docstring)."""

    #: Action (the rpc's handler name) -> ``"<Service>.<Rpc>"``.
    rpcs: ClassVar[Mapping[str, str]] = {}
    #: Action -> :class:`Public` or :class:`Bearer`; an action missing here is public.
    auth: ClassVar[Mapping[str, Public | Bearer]] = {}
    #: Action -> :class:`Check`: the rpc's ``permission: check(...)``.
    checks: ClassVar[Mapping[str, Check]] = {}
    #: Serializers drf-spectacular registers as components (the app's entities, messages).
    components: ClassVar[Sequence[type[BaseSerializer]]] = ()
    #: Named enums drf-spectacular registers: component name -> values.
    enum_components: ClassVar[Mapping[str, Sequence[str]]] = {}
    #: Request bodies above this many bytes answer 413.
    max_body_bytes: ClassVar[int] = 1_048_576

    renderer_classes: ClassVar[list[Any]] = [JSONRenderer]
    #: Bodies are read by :meth:`body` (with the size cap); the parser only tells
    #: drf-spectacular that requests are JSON.
    parser_classes: ClassVar[list[Any]] = [JSONParser]
    schema = GeneratedSchema()
    #: The current request's access rule (set by :meth:`dispatch`).
    access: Public | Bearer = _PUBLIC
    #: Whether the current action authenticates (``Bearer`` or ``permission: check``).
    guarded: bool = False
    #: The ``Allow`` header of the route (set by :meth:`as_view`).
    allow: str = ""

    @classmethod
    def as_view(cls, actions: dict[str, str] | None = None, **initkwargs: Any) -> Any:
        """Return the view of one path: ``{"get": "list_notes", "post": "create_note"}``.

        What DRF's ``ViewSet.as_view`` returns (``cls``, ``actions``, ``initkwargs`` for
        drf-spectacular and ``reverse``; CSRF-exempt), without the per-request
        ``setattr`` of every action on a fresh instance: :meth:`dispatch` looks the
        action up in ``action_map`` directly.
        """
        if not actions:
            raise TypeError(f"{cls.__name__}.as_view() needs the actions of its path")
        for action in actions.values():
            if not callable(getattr(cls, action, None)):
                raise TypeError(f"{cls.__name__} has no action {action!r}")
        actions = dict(actions)
        if "get" in actions:
            actions.setdefault("head", actions["get"])
        allow = ", ".join(m.upper() for m in (*actions, "options") if m != "head")
        for key in ("name", "description", "suffix", "detail", "basename"):
            setattr(cls, key, None)

        def view(request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
            self = cls(**initkwargs)
            self.action_map = actions
            self.allow = allow
            return self.dispatch(request, *args, **kwargs)

        update_wrapper(view, cls, updated=())
        view.cls = cls  # type: ignore[attr-defined]
        view.initkwargs = initkwargs  # type: ignore[attr-defined]
        view.actions = actions  # type: ignore[attr-defined]
        view.login_required = False  # type: ignore[attr-defined]
        return csrf_exempt(view)

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
        """Run the action of the request's method, as ``APIView.dispatch`` does.

        The access rule is looked up once, before the DRF request is built (its
        authenticators depend on it); a successful action's response leaves as it is,
        with only the route's ``Allow`` header added.
        """
        self.args, self.kwargs, self.headers = args, kwargs, {"Allow": self.allow}
        method = request.method.lower()
        action = self.action = self.action_map.get(method)
        if action is not None:
            access = self.access = self.auth.get(action, _PUBLIC)
            self.guarded = type(access) is Bearer or action in self.checks
        elif method == "options":
            self.action = "metadata"
        request = self.request = Request(
            request,
            parsers=_PARSERS,
            authenticators=_bearer_authenticators() if self.guarded else (),
            negotiator=_NEGOTIATOR,
            parser_context={"view": self, "args": args, "kwargs": kwargs},
        )
        try:
            self.initial(request, *args, **kwargs)
            if action is not None:
                response = getattr(self, action)(request, **kwargs)
            elif method in self.http_method_names and method != "head":
                respond: Any = getattr(self, method, self.http_method_not_allowed)
                response = respond(request)
            else:
                response = self.http_method_not_allowed(request)
        except Exception as exc:
            response = self.handle_exception(exc)
        if isinstance(response, Response):
            response = self.finalize_response(request, response, *args, **kwargs)
        else:
            response["Allow"] = self.allow
        self.response = response
        return response

    # -- authentication and permissions, per action ---------------------------------------

    def _access(self) -> Public | Bearer:
        # drf-spectacular builds the view without dispatching: read the action then.
        if "access" in self.__dict__:
            return self.access
        return self.auth.get(getattr(self, "action", None) or "", _PUBLIC)

    def get_authenticators(self) -> list[Any]:
        """Return ``[BearerAuthentication()]`` for a ``Bearer`` or checked action."""
        action = getattr(self, "action", None)
        if isinstance(self._access(), Bearer) or action in self.checks:
            return list(_bearer_authenticators())
        return []

    def get_permissions(self) -> list[BasePermission]:
        """Return ``BearerRequired`` (roles: 403) and ``RpcPermission`` as the rpc says."""
        found: list[BasePermission] = []
        if isinstance(self._access(), Bearer):
            found.append(_any_role_required()())
        if getattr(self, "action", None) in self.checks:
            found.append(_rpc_permission())
        return found or [AllowAny()]

    @property
    def required_roles(self) -> tuple[str, ...]:
        """Return the roles the current action's rpc requires (read by ``BearerRequired``)."""
        access = self._access()
        return access.roles if isinstance(access, Bearer) else ()

    @property
    def permission_action(self) -> dict[str, str]:
        """Return the ``permission: check(...)`` actions (read by ``HasPermission``)."""
        return {name: check.action for name, check in self.checks.items()}

    @property
    def permission_owner_field(self) -> str:
        """Return the current rpc's ``owner_field`` (read by ``HasPermission``)."""
        check = self.checks.get(getattr(self, "action", None) or "")
        return check.owner_field if check is not None else ""

    @property
    def permission_read_action(self) -> str:
        """Return the action reading the current rpc's object (read by ``HasPermission``)."""
        check = self.checks.get(getattr(self, "action", None) or "")
        return check.read if check is not None else ""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """Do DRF's per-request checks, skipping those a public rpc cannot fail.

        A ``Public`` action without ``permission: check`` has no authenticator and allows
        anyone, so authentication stays lazy (``request.user`` still works) and the
        permission check is skipped; throttles and versioning run as configured.
        """
        self.format_kwarg = None
        self.accepted_renderer, self.accepted_media_type = _JSON, _JSON.media_type
        request.accepted_renderer, request.accepted_media_type = _JSON, _JSON.media_type
        if self.versioning_class is not None:
            request.version, request.versioning_scheme = self.determine_version(
                request, *args, **kwargs
            )
        if self.guarded:
            self.perform_authentication(request)
            self.check_permissions(request)
        if self.throttle_classes:
            self.check_throttles(request)

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        """Return the JSON renderer: generated endpoints speak JSON only."""
        del request, force
        return _JSON, _JSON.media_type

    def get_exception_handler(self) -> Callable[..., Response | None]:
        """Answer every error in the toolkit shape, whatever the project's DRF settings."""
        return exception_handler

    # -- request ------------------------------------------------------------------------

    def params(
        self, request: Request, serializer: type[BaseSerializer], path: Mapping[str, str]
    ) -> dict[str, Any]:
        """Validate the path and query parameters; return one value per parameter."""
        raw = request._request
        data: dict[str, Any] = raw.GET.dict() if raw.META.get("QUERY_STRING") else {}
        data.update(path)
        return _validated(serializer, data)

    def body(self, request: Request, serializer: type[BaseSerializer]) -> dict[str, Any]:
        """Validate the JSON body (at most ``max_body_bytes``); return one value per member.

        A body whose members are all optional is optional too (the document does not mark
        it ``required``): no body at all is then ``{}``.
        """
        django_request = request._request
        if _no_body(django_request) and not _has_required_member(serializer):
            return _validated(serializer, {})
        return _validated(serializer, read_json(django_request, self.max_body_bytes))

    def page(self, request: Request) -> tuple[str | None, int]:
        """Return the ``cursor`` (None for the first page) and ``limit`` query parameters."""
        query = request._request.GET
        cursor = query.get("cursor") or None
        limit = parse_limit(query.get("limit"))
        return (None if cursor is None else unsign_cursor(cursor)), limit

    def authorize(self, request: Request, model: Any, pk: Any) -> Any:
        """Load the ``resource:`` object of a ``permission: check`` and check it.

        An unknown primary key is ``404 not_found``; so is a refusal when the caller may
        not read the object, with the same body, so ids reveal nothing; a caller who may
        read it gets ``403 permission_denied`` (the permission battery decides, on the
        loaded object, so owned-only rules see its ``owner_field``). Returns the object.
        """
        unknown = ApiError(404, "not_found", f"no such {_words(model.__name__)}")
        try:
            obj = model._default_manager.get(pk=pk)
        except (model.DoesNotExist, ValueError, TypeError):
            raise unknown from None
        try:
            self.check_object_permissions(request, obj)
        except NotFound:
            raise unknown from None
        return obj

    # -- response -----------------------------------------------------------------------

    def respond(self, result: Any, serializer: type[BaseSerializer]) -> HttpResponse:
        """Answer 200 with the handler's result, serialised."""
        return _json_response(_codec(serializer).represent(result))

    def respond_page(self, page: Any, serializer: type[BaseSerializer]) -> HttpResponse:
        """Answer 200 with ``{"items": [...], "next_cursor": ...}`` from a ``Page``."""
        try:
            items, next_cursor = page.items, page.next_cursor
        except AttributeError:
            raise TypeError(
                f"{type(self).__name__}: a paginated handler must return "
                f"toolkit_batteries.http.pagination.Page, not {type(page).__name__}"
            ) from None
        represent = _codec(serializer).represent
        data = [represent(item) for item in items]
        signed = None if next_cursor is None else sign_cursor(str(next_cursor))
        return _json_response({"items": data, "next_cursor": signed})

    def handle_exception(self, exc: Exception) -> Response:
        """Name the rpc in a stub's 501, then answer as the toolkit handler does."""
        if isinstance(exc, NotImplementedError):
            rpc = self.rpcs.get(self.action or "", "this rpc")
            exc = ApiError(501, "unimplemented", f"{rpc} is not implemented yet")
        return super().handle_exception(exc)


@cache
def _any_role_required() -> type[BasePermission]:
    """Return the permission of ``auth: required(roles: {a, b})``: any one listed role passes.

    The schema language's roles are alternatives (docs/schema-language.md): a caller
    holding none of them is refused with 403, one of them is enough. ``BearerRequired``
    still answers 401 for an anonymous caller.
    """
    from rest_framework.exceptions import PermissionDenied

    from toolkit_batteries.auth.drf import BearerRequired

    class _NoRoles:
        required_roles: tuple[str, ...] = ()

    class AnyRoleRequired(BearerRequired):
        def has_permission(self, request: Any, view: Any) -> bool:
            super().has_permission(request, _NoRoles())  # 401 without a valid bearer token
            accepted = tuple(getattr(view, "required_roles", ()) or ())
            if accepted and not any(request.user.has_roles(role) for role in accepted):
                raise PermissionDenied(self.message, code="permission_denied")
            return True

    return AnyRoleRequired


def _bearer_authenticators() -> tuple[Any, ...]:
    """Return the authenticators of a guarded action (one shared, stateless instance)."""
    global _BEARER
    if _BEARER is None:
        from toolkit_batteries.auth.drf import BearerAuthentication

        _BEARER = (BearerAuthentication(),)
    return _BEARER


_BEARER: tuple[Any, ...] | None = None


def with_defaults(handlers: type, defaults: type) -> type:
    """Return ``handlers`` with ``defaults``' methods for what it does not define.

    ``handlers`` is the user's class in ``handlers.py``; ``defaults`` the generated CRUD
    implementations (:mod:`toolkit_batteries.api_runtime.crud`). A method the user writes
    wins, method by method, because it comes first in the MRO.
    """
    return type(handlers.__name__, (handlers, defaults), {"__module__": handlers.__module__})


@dataclass(frozen=True, slots=True)
class Check:
    """``permission: check("action", ...)``: the action, and whether a resource is loaded.

    ``on_object`` is true when the rpc names its ``resource:`` object (a parameter named
    like the entity's primary key, or ``<entity>_id``): the generated action loads it and
    calls :meth:`GeneratedViewSet.authorize`. Otherwise the check runs before the action,
    without a resource.
    """

    action: str
    on_object: bool = False
    #: The schema's ``owner_field``: the field owned-only rules compare ("" = the rule's).
    owner_field: str = ""
    #: The action that reads the same object (its ``GET`` rpc's check), so a refused
    #: write answers 403 to a caller who may read the object, 404 to one who may not.
    read: str = ""


def _rpc_permission() -> BasePermission:
    """Return the permission battery's DRF permission, deciding object rpcs on the object.

    ``HasPermission`` decides a request without a resource in ``has_permission``; an rpc
    with a ``resource:`` is decided by :meth:`GeneratedViewSet.authorize` on the loaded
    object (``check_object_permissions``), so ``has_permission`` only authenticates.
    """
    global _RPC_PERMISSION
    if _RPC_PERMISSION is None:
        from toolkit_batteries.permission.drf import HasPermission

        class RpcPermission(HasPermission):
            def has_permission(self, request: Any, view: Any) -> bool:
                if getattr(view.checks.get(view.action), "on_object", False):
                    self._subject(request)  # 401 without a bearer caller
                    return True
                return super().has_permission(request, view)

        _RPC_PERMISSION = RpcPermission
    return _RPC_PERMISSION()


_RPC_PERMISSION: Any = None


def _words(name: str) -> str:
    """Return ``OrderItem`` as ``order item`` (for messages)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).lower()


#: Separates a cursor from its signature: outside the URL-safe base64 alphabet, and left
#: as is in a query string.
_CURSOR_SEP = "."
#: Keeps cursor signatures apart from every other use of SECRET_KEY.
_CURSOR_SALT = "toolkit.codegen.cursor"


def _cursor_signer() -> signing.Signer:
    # SECRET_KEY_FALLBACKS verify too, so rotating the key keeps cursors in flight valid.
    return signing.Signer(sep=_CURSOR_SEP, salt=_CURSOR_SALT)


def _no_body(request: Any) -> bool:
    """Return True when the request carries no body (no length, not chunked)."""
    meta = request.META
    return meta.get("CONTENT_LENGTH") in (None, "", "0") and "HTTP_TRANSFER_ENCODING" not in meta


def _has_required_member(serializer: type[BaseSerializer]) -> bool:
    return any(field.required for field in serializer().fields.values())


def sign_cursor(cursor: str) -> str:
    """Return ``cursor`` with its signature, as clients receive it.

    A cursor is the handler's position in a list (often the last row's sort key): signed,
    a client can hand it back but not point it elsewhere, so a handler may trust what it
    decodes from one.
    """
    return _cursor_signer().sign(cursor)


def unsign_cursor(signed: str) -> str:
    """Return the cursor the handler wrote; an altered or forged one is a 400 on ``cursor``."""
    try:
        return _cursor_signer().unsign(signed)
    except signing.BadSignature:
        raise ApiError(
            400, "invalid_argument", "invalid parameter cursor", {"cursor": ["invalid"]}
        ) from None


def _json_response(data: Any) -> HttpResponse:
    """Return ``data`` (a serializer's primitives) as a 200 JSON response.

    What DRF's ``JSONRenderer`` would write (compact, UTF-8, no NaN), without the template
    response machinery a successful generated call does not need.
    """
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return HttpResponse(body.encode(), content_type=JSON_MEDIA)


class _Codec:
    """One serializer instance and what it takes to use it fast (built once per class).

    - :meth:`validate` is ``run_validation``; for a plain ``Serializer`` without
      serializer-level validators, ``validate()`` or read-only defaults (every generated
      request and parameter serializer), it is ``to_internal_value`` itself, which raises
      the same error details.
    - :meth:`represent` is ``to_representation``; for a model instance whose fields all
      read one attribute (every generated entity serializer) it reads them directly,
      converting text and UUIDs with ``str`` as DRF does, and each other value with its
      field's own ``to_representation``.
    """

    __slots__ = ("direct", "inputs", "names", "plan", "serializer")

    def __init__(self, serializer_class: type[BaseSerializer]) -> None:
        instance: Any = serializer_class()
        fields = instance.fields
        self.serializer = instance
        self.names = tuple(fields)
        self.direct = (
            isinstance(instance, Serializer)
            and type(instance).validate is Serializer.validate
            and type(instance).run_validation is Serializer.run_validation
            and not instance.validators
            and not any(f.read_only for f in fields.values())
        )
        # What ``Serializer.to_internal_value`` does per field on a dict: get the value,
        # run the field's validation, keep it under its source attribute.
        inputs: list[tuple[str, Callable[[Any], Any], Any]] = []
        for field in instance._writable_fields:
            simple = type(field).get_value is Field.get_value and field.source_attrs == [
                field.field_name
            ]
            if not simple or hasattr(instance, f"validate_{field.field_name}"):
                self.direct = False
                break
            inputs.append((field.field_name, field.run_validation, field.source_attrs[0]))
        self.inputs = inputs if self.direct else None
        plan: list[tuple[str, str, Callable[[Any], Any]]] = []
        readable = True
        for field in instance._readable_fields:
            attrs = field.source_attrs
            if (
                len(attrs) != 1
                or not isinstance(instance, Serializer)
                or type(field).get_attribute is not Field.get_attribute  # a relation's ids
            ):
                readable = False
                break
            kind = type(field).to_representation
            if kind is CharField.to_representation or (
                kind is UUIDField.to_representation and field.uuid_format == "hex_verbose"
            ):
                convert: Callable[[Any], Any] = str
            elif (
                kind is DateTimeField.to_representation
                and getattr(field, "format", empty) in (empty, ISO_8601)
                and api_settings.DATETIME_FORMAT == ISO_8601
                and not hasattr(field, "timezone")
            ):
                convert = _iso_datetime
            elif (
                isinstance(field, TimestampField)
                and kind is DateTimeField.to_representation
                and getattr(field, "format", empty) in (empty, ISO_8601)
                and api_settings.DATETIME_FORMAT == ISO_8601
            ):
                convert = _utc_datetime
            else:
                convert = field.to_representation
            plan.append((field.field_name, attrs[0], convert))
        self.plan = plan if readable else None

    def validate(self, data: Any) -> dict[str, Any]:
        inputs = self.inputs
        if inputs is None or type(data) is not dict:
            if self.direct and type(data) is dict:
                values = self.serializer.to_internal_value(data)
            else:
                values = self.serializer.run_validation(data)
            return {name: values.get(name) for name in self.names}
        out: dict[str, Any] = {}
        errors: dict[str, Any] = {}
        for name, run_validation, attr in inputs:
            try:
                out[attr] = run_validation(data.get(name, empty))
            except ValidationError as exc:
                errors[name] = exc.detail
            except DjangoValidationError as exc:
                errors[name] = get_error_detail(exc)
            except SkipField:
                out[attr] = None
        if errors:
            raise ValidationError(errors)
        return out if len(out) == len(self.names) else {n: out.get(n) for n in self.names}

    def represent(self, obj: Any) -> Any:
        plan = self.plan
        if plan is None or not isinstance(obj, Model):
            return self.serializer.to_representation(obj)
        out = {}
        try:
            for name, attr, convert in plan:
                value = getattr(obj, attr)
                out[name] = None if value is None else convert(value)
        except AttributeError:
            return self.serializer.to_representation(obj)
        return out


def _iso_datetime(value: Any) -> Any:
    """Return what DRF's ``DateTimeField().to_representation`` returns, ISO 8601 output.

    DRF converts an aware value to the current time zone (naive values are made aware
    in it) and writes UTC as ``Z``; the same steps, without the per-call settings lookup.
    """
    if type(value) is not datetime.datetime or value.utcoffset() is None or not settings.USE_TZ:
        return DateTimeField().to_representation(value)  # the rare cases, as DRF does them
    zone = timezone.get_current_timezone()
    if value.tzinfo is not datetime.UTC or getattr(zone, "key", None) != "UTC":
        value = value.astimezone(zone)  # a UTC value in UTC needs no conversion
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _utc_datetime(value: Any) -> Any:
    """Return what :class:`~.fields.TimestampField` writes: the time in UTC, ``Z``."""
    if type(value) is not datetime.datetime or value.utcoffset() is None:
        return TimestampField().to_representation(value)  # the rare cases, as DRF does them
    if value.tzinfo is not datetime.UTC:
        value = value.astimezone(datetime.UTC)
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _codec(serializer: type[BaseSerializer]) -> _Codec:
    try:
        return _CODECS[serializer]
    except KeyError:
        return _CODECS.setdefault(serializer, _Codec(serializer))


_CODECS: dict[type[BaseSerializer], _Codec] = {}


def _validated(serializer: type[BaseSerializer], data: Any) -> dict[str, Any]:
    """Validate ``data`` as ``serializer(data=data).is_valid(raise_exception=True)`` would."""
    return _codec(serializer).validate(data)

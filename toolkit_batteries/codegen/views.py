"""The base of generated views: validate, call the handler, serialise, answer errors.

A generated view (``<app>/generated/views.py``) is one :class:`GeneratedView` subclass per
schema path, one method per rpc bound to it; each method reads like the rpc::

    def post(self, request: Request, **path: str) -> HttpResponse:
        params = self.body(request, s.UserServiceCreateUserRequestSerializer)
        result = handlers.UserService().create_user(request, **params)
        return self.respond(result, s.UserSerializer)

This module holds what those lines need, so generated code never carries logic:

- ``auth = {"post": Public(), "get": Bearer("admin")}`` picks, per method, no
  authentication (``AllowAny``) or ``toolkit_batteries.auth.drf.BearerAuthentication`` with
  ``BearerRequired`` and the rpc's roles (401 without a valid bearer token, 403 without a
  role).
- :meth:`GeneratedView.params` / :meth:`GeneratedView.body` validate path and query
  parameters / the JSON body (1 MiB cap: 413; bad JSON or invalid fields: 400 with
  ``fields``) and return one value per rpc parameter (``None`` for an absent optional one).
- :meth:`GeneratedView.page` reads ``cursor`` and ``limit`` (default 50, at most 200);
  :meth:`GeneratedView.respond` answers 200 with the serialised result and
  :meth:`GeneratedView.respond_page` with ``{"items": [...], "next_cursor": ...}``.
  Cursors are signed: the handler's ``next_cursor`` leaves with an HMAC of
  ``SECRET_KEY`` (:func:`sign_cursor`), and a cursor that comes back altered or forged is
  a 400 on field ``cursor`` before the handler runs, which gets the cursor it wrote.
- Errors use ``toolkit_batteries.http``'s shape whatever the project's
  ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``: a handler raises ``ApiError`` for 4xx, and a
  handler stub's ``NotImplementedError`` answers 501 ``unimplemented``.
- :class:`GeneratedSchema` makes drf-spectacular describe the view as the compiled
  ``openapi.json`` does (components, paginated envelope, ``bearerAuth`` security).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from django.core import signing
from django.http import HttpResponse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema as spectacular_extend_schema
from rest_framework.parsers import JSONParser
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from toolkit_batteries.http import ApiError, read_json
from toolkit_batteries.http.drf import exception_handler
from toolkit_batteries.http.pagination import parse_limit

from .fields import EnumField

__all__ = [
    "Bearer",
    "GeneratedSchema",
    "GeneratedView",
    "PageOf",
    "Public",
    "extend_schema",
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
    """

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


class GeneratedView(APIView):
    """The base class of every generated view (see the module docstring)."""

    #: Method (lower case) -> ``"<Service>.<Rpc>"`` bound to it.
    rpcs: ClassVar[Mapping[str, str]] = {}
    #: Method (lower case) -> :class:`Public` or :class:`Bearer`; others are public (405).
    auth: ClassVar[Mapping[str, Public | Bearer]] = {}
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

    # -- authentication, per method ------------------------------------------------------

    def initialize_request(self, request: Any, *args: Any, **kwargs: Any) -> Request:
        """Note the method first: the authenticators depend on it."""
        self._rpc_method = request.method.lower()
        return super().initialize_request(request, *args, **kwargs)

    def _access(self) -> Public | Bearer:
        method = getattr(self, "_rpc_method", None)
        if method is None:
            request = getattr(self, "request", None)
            method = request.method.lower() if request is not None else ""
        # Django answers HEAD with the GET handler, so HEAD needs GET's credentials.
        return self.auth.get("get" if method == "head" else method, _PUBLIC)

    def get_authenticators(self) -> list[Any]:
        """Return ``[BearerAuthentication()]`` for a ``Bearer`` method, else nothing."""
        if isinstance(self._access(), Bearer):
            from toolkit_batteries.auth.drf import BearerAuthentication

            return [BearerAuthentication()]
        return []

    def get_permissions(self) -> list[BasePermission]:
        """Return ``[BearerRequired()]`` for a ``Bearer`` method, else ``[AllowAny()]``."""
        if isinstance(self._access(), Bearer):
            from toolkit_batteries.auth.drf import BearerRequired

            return [BearerRequired()]
        return [AllowAny()]

    @property
    def required_roles(self) -> tuple[str, ...]:
        """Return the roles the current method's rpc requires (read by ``BearerRequired``)."""
        access = self._access()
        return access.roles if isinstance(access, Bearer) else ()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """Do DRF's per-request checks, skipping those a public rpc cannot fail.

        A ``Public`` method has no authenticator and allows anyone, so authentication
        stays lazy (``request.user`` still works) and the permission check is skipped;
        throttles and versioning run as configured.
        """
        self.format_kwarg = self.get_format_suffix(**kwargs)
        self.accepted_renderer, self.accepted_media_type = _JSON, _JSON.media_type
        request.version, request.versioning_scheme = self.determine_version(
            request, *args, **kwargs
        )
        if isinstance(self._access(), Bearer):
            self.perform_authentication(request)
            self.check_permissions(request)
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
        data: dict[str, Any] = request.query_params.dict()
        data.update(path)
        return _validated(serializer, data)

    def body(self, request: Request, serializer: type[BaseSerializer]) -> dict[str, Any]:
        """Validate the JSON body (at most ``max_body_bytes``); return one value per member."""
        return _validated(serializer, read_json(request._request, self.max_body_bytes))

    def page(self, request: Request) -> tuple[str | None, int]:
        """Return the ``cursor`` (None for the first page) and ``limit`` query parameters."""
        cursor = request.query_params.get("cursor") or None
        limit = parse_limit(request.query_params.get("limit"))
        return (None if cursor is None else unsign_cursor(cursor)), limit

    # -- response -----------------------------------------------------------------------

    def respond(self, result: Any, serializer: type[BaseSerializer]) -> HttpResponse:
        """Answer 200 with the handler's result, serialised."""
        return _json_response(_shared(serializer).to_representation(result))

    def respond_page(self, page: Any, serializer: type[BaseSerializer]) -> HttpResponse:
        """Answer 200 with ``{"items": [...], "next_cursor": ...}`` from a ``Page``."""
        try:
            items, next_cursor = page.items, page.next_cursor
        except AttributeError:
            raise TypeError(
                f"{type(self).__name__}: a paginated handler must return "
                f"toolkit_batteries.http.pagination.Page, not {type(page).__name__}"
            ) from None
        shared = _shared(serializer)
        data = [shared.to_representation(item) for item in items]
        signed = None if next_cursor is None else sign_cursor(str(next_cursor))
        return _json_response({"items": data, "next_cursor": signed})

    def handle_exception(self, exc: Exception) -> Response:
        """Name the rpc in a stub's 501, then answer as the toolkit handler does."""
        if isinstance(exc, NotImplementedError):
            rpc = self.rpcs.get(getattr(self, "_rpc_method", ""), "this rpc")
            exc = ApiError(501, "unimplemented", f"{rpc} is not implemented yet")
        return super().handle_exception(exc)


#: Separates a cursor from its signature: outside the URL-safe base64 alphabet, and left
#: as is in a query string.
_CURSOR_SEP = "."
#: Keeps cursor signatures apart from every other use of SECRET_KEY.
_CURSOR_SALT = "toolkit.codegen.cursor"


def _cursor_signer() -> signing.Signer:
    # SECRET_KEY_FALLBACKS verify too, so rotating the key keeps cursors in flight valid.
    return signing.Signer(sep=_CURSOR_SEP, salt=_CURSOR_SALT)


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


def _shared(serializer: type[BaseSerializer]) -> Any:
    """Return one long-lived instance of ``serializer`` with its fields built.

    DRF deep-copies a serializer's declared fields for every instance; generated views
    only call the stateless ``run_validation`` and ``to_representation``, so one instance
    per class serves every request (and thread) at a fraction of the cost.
    """
    try:
        return _SHARED[serializer]
    except KeyError:
        instance = serializer()
        instance.fields  # noqa: B018 - build (and cache) the bound fields now
        return _SHARED.setdefault(serializer, instance)


_SHARED: dict[type[BaseSerializer], Any] = {}


def _validated(serializer: type[BaseSerializer], data: Any) -> dict[str, Any]:
    """Validate ``data`` as ``serializer(data=data).is_valid(raise_exception=True)`` would."""
    shared = _shared(serializer)
    values = shared.run_validation(data)
    return {name: values.get(name) for name in shared.fields}

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
plain ``HttpResponse``, the per-request lookup of an action's access rule, which
:meth:`~GeneratedViewSet.as_view` does once per route), so a viewset costs no more per
request than a plain ``APIView``;
once it has answered with a rendered response it unlinks itself from the DRF request, so
the request's objects are freed at once rather than left for the cycle collector. Request
members are validated by :mod:`.checks` (``Field.run_validation``'s answers, fewer calls).

The pieces live beside it: :mod:`.access` (``Public``, ``Bearer``, ``Check`` and the DRF
permissions they become), :mod:`.codec` (request validation, response rendering, signed
cursors) and :mod:`.openapi` (``GeneratedSchema``, ``extend_schema``); their public names
stay importable from here, where generated code imports them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import update_wrapper
from typing import Any, ClassVar

from django.http import HttpResponse
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from rest_framework.exceptions import NotFound
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.viewsets import ViewSet

from toolkit_batteries.http import ApiError, read_json
from toolkit_batteries.http.drf import exception_handler
from toolkit_batteries.http.pagination import parse_limit

from .access import (
    _PUBLIC,
    Bearer,
    Check,
    Public,
    _any_role_required,
    _bearer_authenticators,
    _rpc_permission,
)
from .codec import (
    _CODECS,
    JSON_MEDIA,
    _codec,
    _encode,
    _json_response,
    _no_body,
    sign_cursor,
    unsign_cursor,
)
from .openapi import BearerAuthScheme, GeneratedSchema, PageOf, extend_schema
from .relations import attach_related_ids, reading

__all__ = [
    "Bearer",
    "BearerAuthScheme",
    "Check",
    "GeneratedSchema",
    "GeneratedViewSet",
    "PageOf",
    "Public",
    "extend_schema",
    "sign_cursor",
    "unsign_cursor",
    "with_defaults",
]

_JSON = JSONRenderer()
_JSON_MEDIA_TYPE: str = _JSON.media_type
_PARSERS = (JSONParser(),)
_NEGOTIATOR = DefaultContentNegotiation()


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
    #: The route's request method -> (action, access rule, guarded) (set by :meth:`as_view`).
    steps: Mapping[str, tuple[str, Public | Bearer, bool]] = {}
    #: What :meth:`initial` would set on every request, the same for every request: a
    #: generated endpoint speaks JSON only, and takes no format suffix.
    format_kwarg: None = None
    accepted_renderer: JSONRenderer = _JSON
    accepted_media_type: str = _JSON_MEDIA_TYPE

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

        # Django's View.__init__ only stores initkwargs: with none, skip the call.
        plain_init = (
            not initkwargs and cls.__init__ is View.__init__ and cls.__new__ is object.__new__
        )
        # Per method, what dispatch needs before the DRF request exists: looked up once
        # here rather than on every request (``auth``/``checks`` as the view will see them).
        auth, checks = initkwargs.get("auth", cls.auth), initkwargs.get("checks", cls.checks)
        steps = {}
        for method, action in actions.items():
            access = auth.get(action, _PUBLIC)
            steps[method.upper()] = (action, access, type(access) is Bearer or action in checks)

        def view(request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
            self = object.__new__(cls) if plain_init else cls(**initkwargs)
            self.action_map = actions
            self.allow = allow
            self.steps = steps
            return self.dispatch(request, *args, **kwargs)

        update_wrapper(view, cls, updated=())
        view.cls = cls  # type: ignore[attr-defined]
        view.initkwargs = initkwargs  # type: ignore[attr-defined]
        view.actions = actions  # type: ignore[attr-defined]
        view.login_required = False  # type: ignore[attr-defined]
        return csrf_exempt(view)

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
        """Run the action of the request's method, as ``APIView.dispatch`` does.

        The access rule comes from :meth:`as_view`'s ``steps``, before the DRF request is
        built (its authenticators depend on it); a successful action's response leaves as
        it is, with only the route's ``Allow`` header added.
        """
        self.args, self.kwargs = args, kwargs
        step = self.steps.get(request.method)
        action: str | None
        if step is None:  # a method without an action: OPTIONS, or 405
            action = None
            method = request.method.lower()
            self.action = "metadata" if method == "options" else None
        else:
            action, self.access, guarded = step
            self.action = action
            if guarded:
                self.guarded = True
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
            elif method in self.http_method_names and method != "head":  # OPTIONS, or 405
                respond: Any = getattr(self, method, self.http_method_not_allowed)
                response = respond(request)
            else:
                response = self.http_method_not_allowed(request)
        except Exception as exc:
            response = self.handle_exception(exc)
        if isinstance(response, Response):  # rendered later, from its renderer context
            self.headers = {"Allow": self.allow}  # what finalize_response adds
            self.response = self.finalize_response(request, response, *args, **kwargs)
            return self.response
        response["Allow"] = self.allow
        # A rendered response needs neither this view nor the DRF request again; DRF links
        # them to each other and the request to itself: unlinked, the request's objects
        # are freed with the view instead of waiting, as cyclic garbage, for the collector.
        context = request.parser_context
        context.pop("view", None)
        context.pop("request", None)
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
        # The view's format_kwarg and accepted renderer are the class's (see above).
        request.accepted_renderer, request.accepted_media_type = _JSON, _JSON_MEDIA_TYPE
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
        return (_CODECS.get(serializer) or _codec(serializer)).validate(data)

    def body(self, request: Request, serializer: type[BaseSerializer]) -> dict[str, Any]:
        """Validate the JSON body (at most ``max_body_bytes``); return one value per member.

        A body whose members are all optional is optional too (the document does not mark
        it ``required``): no body at all is then ``{}``.
        """
        django_request = request._request
        codec = _CODECS.get(serializer) or _codec(serializer)
        if not codec.required and _no_body(django_request):
            return codec.validate({})
        return codec.validate(read_json(django_request, self.max_body_bytes))

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
        """Answer 200 with the handler's result, serialised (relation ids: the caller's)."""
        codec = _CODECS.get(serializer) or _codec(serializer)
        if not codec.reads_relations:  # no relation ids: nothing depends on the caller
            return HttpResponse(_encode(codec.represent(result)).encode(), content_type=JSON_MEDIA)
        with reading(self.request):
            attach_related_ids([result], codec.related)
            return _json_response(codec.represent(result))

    def respond_page(self, page: Any, serializer: type[BaseSerializer]) -> HttpResponse:
        """Answer 200 with ``{"items": [...], "next_cursor": ...}`` from a ``Page``."""
        try:
            items, next_cursor = page.items, page.next_cursor
        except AttributeError:
            raise TypeError(
                f"{type(self).__name__}: a paginated handler must return "
                f"toolkit_batteries.http.pagination.Page, not {type(page).__name__}"
            ) from None
        codec = _CODECS.get(serializer) or _codec(serializer)
        represent = codec.represent
        if codec.reads_relations:
            with reading(self.request):  # one query per many_to_many for the whole page
                attach_related_ids(items, codec.related)
                data = [represent(item) for item in items]
        else:  # no relation ids: nothing depends on the caller
            data = [represent(item) for item in items]
        signed = None if next_cursor is None else sign_cursor(str(next_cursor))
        return _json_response({"items": data, "next_cursor": signed})

    def handle_exception(self, exc: Exception) -> Response:
        """Name the rpc in a stub's 501, then answer as the toolkit handler does."""
        if isinstance(exc, NotImplementedError):
            rpc = self.rpcs.get(self.action or "", "this rpc")
            exc = ApiError(501, "unimplemented", f"{rpc} is not implemented yet")
        return super().handle_exception(exc)


def with_defaults(handlers: type, defaults: type) -> type:
    """Return ``handlers`` with ``defaults``' methods for what it does not define.

    ``handlers`` is the user's class in ``handlers.py``; ``defaults`` the generated CRUD
    implementations (:mod:`toolkit_batteries.api_runtime.crud`). A method the user writes
    wins, method by method, because it comes first in the MRO.
    """
    return type(handlers.__name__, (handlers, defaults), {"__module__": handlers.__module__})


def _words(name: str) -> str:
    """Return ``OrderItem`` as ``order item`` (for messages)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).lower()

"""``permission_required``: authorization for plain Django views (no DRF needed).

::

    from toolkit_batteries.permission.decorators import permission_required

    @permission_required("report.read")
    def reports(request): ...

    @permission_required("post.edit", resource=Post)            # loads Post by the "pk" URL kwarg
    def edit_post(request, pk):
        post = request.permission_resource                      # the object that was checked

    @permission_required("post.edit", resource=lambda request, slug: Post.objects.get(slug=slug))
    def edit_by_slug(request, slug): ...

The caller is the auth battery's verified bearer token: the decorator verifies the
``Authorization: Bearer`` header itself (or reuses ``request.auth`` set by
``bearer_required``); a missing or refused credential answers the generic ``401``.
``resource`` is a Django model (fetched by the ``lookup`` URL keyword, ``pk`` by default)
or a callable ``(request, *args, **kwargs) -> object``; a missing object (``None``,
``DoesNotExist``, ``Http404``) answers ``404``. A refusal answers
``403 {"error": {"code": "permission_denied", "message": "permission denied"}}``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpRequest, HttpResponse

from toolkit_batteries.http.errors import error_response

from .base import Subject

__all__ = ["DENIED_MESSAGE", "permission_required", "subject_from_claims"]

logger = logging.getLogger("toolkit.permission")

#: The message of every 403 a permission refusal answers.
DENIED_MESSAGE = "permission denied"


def subject_from_claims(claims: Any) -> Subject | None:
    """Return the :class:`Subject` of the auth battery's verified ``Claims``, else ``None``."""
    from toolkit_batteries.auth.base import Claims

    if isinstance(claims, Claims) and claims.subject:
        return Subject(claims.subject, claims.roles)
    return None


def _loader(resource: Any, lookup: str) -> Callable[..., Any] | None:
    if resource is None:
        return None
    manager = getattr(resource, "_default_manager", None)
    if isinstance(resource, type) and manager is not None:

        def load(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            if lookup not in kwargs:
                raise TypeError(f'permission_required: the URL has no "{lookup}" keyword')
            return manager.get(pk=kwargs[lookup])

        return load
    if callable(resource):
        return resource
    raise TypeError("permission_required: resource must be a Django model or a callable")


def permission_required(
    action: str,
    *,
    resource: Any = None,
    lookup: str = "pk",
    instance: str = "default",
    auth_instance: str = "default",
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Require a verified caller whom ``services.permission(instance)`` allows ``action``.

    ``auth_instance`` names the auth instance that verifies the bearer token. Synchronous
    views only.
    """
    if not isinstance(action, str) or not action:
        raise TypeError("permission_required: action must be a non-empty string")
    load = _loader(resource, lookup)

    def decorate(func: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        if inspect.iscoroutinefunction(func):
            raise TypeError("permission_required wraps synchronous views only")

        @wraps(func)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            from toolkit_batteries import services
            from toolkit_batteries.auth.bearer import BearerRefused, authenticate_authorization
            from toolkit_batteries.auth.users import TokenUser

            claims = getattr(request, "auth", None)
            subject = subject_from_claims(claims)
            if subject is None:
                header = request.META.get("HTTP_AUTHORIZATION", "")
                try:
                    claims = authenticate_authorization(header, auth_instance, request.path)
                except BearerRefused:
                    return error_response(401, "unauthenticated")
                subject = subject_from_claims(claims)
                if subject is None or claims is None:
                    logger.info("permission check without a bearer caller on %s", request.path)
                    return error_response(401, "unauthenticated")
                request.user = TokenUser(claims)
                request.auth = claims  # type: ignore[attr-defined]
            obj = None
            if load is not None:
                try:
                    obj = load(request, *args, **kwargs)
                except (ObjectDoesNotExist, Http404):
                    obj = None
                if obj is None:
                    return error_response(404, "not_found", "not found")
            if not services.permission(instance).check(subject, action, obj):
                logger.info('permission denied on %s: action "%s"', request.path, action)
                return error_response(403, "permission_denied", DENIED_MESSAGE)
            request.permission_resource = obj  # type: ignore[attr-defined]
            return func(request, *args, **kwargs)

        return wrapper

    return decorate

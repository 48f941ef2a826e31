"""``require_permission``: authorization of bearer callers for plain Django views (no DRF).

::

    from toolkit_batteries.permission.decorators import require_permission

    @require_permission("report.read")
    def reports(request): ...

    @require_permission("post.edit", resource=Post)             # loads Post by the "pk" URL kwarg
    def edit_post(request, pk):
        post = request.permission_resource                      # the object that was checked

    @require_permission("post.edit", resource=lambda request, slug: Post.objects.get(slug=slug))
    def edit_by_slug(request, slug): ...

It was called ``permission_required``, which shadowed Django's decorator of that name;
the old name still works, with a ``DeprecationWarning``. Django's own
``django.contrib.auth.decorators.permission_required`` asks the same rules through
:class:`~toolkit_batteries.permission.backends.PermissionBackend` (session users and
token users alike).

The caller is the auth battery's verified bearer token: the decorator verifies the
``Authorization: Bearer`` header itself (or reuses ``request.auth`` set by
``bearer_required``); a missing or refused credential answers the generic ``401``.
``resource`` is a Django model (fetched by the ``lookup`` URL keyword, ``pk`` by default)
or a callable ``(request, *args, **kwargs) -> object``; a missing object (``None``,
``DoesNotExist``, ``Http404``) answers ``404``. A refusal answers
``403 {"error": {"code": "permission_denied", "message": "permission denied"}}``, or, on a
loaded object the caller may not read (``read_action``), the missing object's ``404``.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpRequest, HttpResponse

from toolkit_batteries.http.errors import error_response

from .base import Subject
from .denial import hides_refusal

__all__ = ["DENIED_MESSAGE", "require_permission", "subject_from_claims"]

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
                raise TypeError(f'require_permission: the URL has no "{lookup}" keyword')
            return manager.get(pk=kwargs[lookup])

        return load
    if callable(resource):
        return resource
    raise TypeError("require_permission: resource must be a Django model or a callable")


def require_permission(
    action: str,
    *,
    resource: Any = None,
    lookup: str = "pk",
    instance: str = "default",
    auth_instance: str = "default",
    read_action: str | None = None,
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Require a verified caller whom ``services.permission(instance)`` allows ``action``.

    ``auth_instance`` names the auth instance that verifies the bearer token. A refusal on
    a loaded ``resource`` answers ``404`` (as a missing one) unless the caller may
    ``read_action`` it (then ``403``). Synchronous views only.
    """
    if not isinstance(action, str) or not action:
        raise TypeError("require_permission: action must be a non-empty string")
    load = _loader(resource, lookup)

    def decorate(func: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        if inspect.iscoroutinefunction(func):
            raise TypeError("require_permission wraps synchronous views only")

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
            authorizer = services.permission(instance)
            if not authorizer.check(subject, action, obj):
                logger.info('permission denied on %s: action "%s"', request.path, action)
                if obj is not None and hides_refusal(
                    authorizer,
                    subject,
                    method=request.method or "",
                    action=action,
                    read_action=read_action,
                    obj=obj,
                ):
                    return error_response(404, "not_found", "not found")
                return error_response(403, "permission_denied", DENIED_MESSAGE)
            request.permission_resource = obj  # type: ignore[attr-defined]
            return func(request, *args, **kwargs)

        return wrapper

    return decorate


def permission_required(
    action: str, **kwargs: Any
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Return :func:`require_permission` (deprecated alias; warns on use).

    The name shadowed ``django.contrib.auth.decorators.permission_required``; import
    :func:`require_permission` instead.
    """
    warnings.warn(
        "toolkit_batteries.permission.decorators.permission_required is deprecated; use "
        "require_permission (Django's permission_required now asks the same rules "
        "through PermissionBackend)",
        DeprecationWarning,
        stacklevel=2,
    )
    return require_permission(action, **kwargs)

"""``bearer_required``: bearer authentication for plain Django views (no DRF needed).

::

    from toolkit_batteries.auth.decorators import bearer_required

    @bearer_required
    def me(request):
        return JsonResponse({"id": request.user.id})

    @bearer_required(roles=("admin",))
    def admin_report(request): ...

A missing, malformed, invalid, expired or revoked token answers ``401``
``{"error": {"code": "unauthenticated", "message": "authentication required"}}`` with
``WWW-Authenticate: Bearer``; a verified caller without every listed role answers ``403``
``permission_denied``. On success ``request.user`` is a
:class:`~toolkit_batteries.auth.TokenUser` and ``request.auth`` the verified
:class:`~toolkit_batteries.auth.Claims`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse

from toolkit_batteries.http.errors import error_response

from .bearer import BearerRefused, authenticate_authorization, logger
from .users import TokenUser

__all__ = ["bearer_required"]


def bearer_required(
    view: Callable[..., HttpResponse] | None = None,
    *,
    roles: Sequence[str] = (),
    instance: str = "default",
) -> Any:
    """Require a verified bearer token (and every one of ``roles``) before ``view`` runs.

    Usable bare (``@bearer_required``) or with arguments; ``instance`` names the auth
    instance that verifies. Synchronous views only.
    """
    if isinstance(roles, str):
        raise TypeError("roles must be a sequence of role names, not one string")
    required = tuple(roles)

    def decorate(func: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        if inspect.iscoroutinefunction(func):
            raise TypeError("bearer_required wraps synchronous views only")

        @wraps(func)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            header = request.META.get("HTTP_AUTHORIZATION", "")
            try:
                claims = authenticate_authorization(header, instance, request.path)
            except BearerRefused:
                return error_response(401, "unauthenticated")
            if claims is None:
                logger.info("bearer credential missing on %s", request.path)
                return error_response(401, "unauthenticated")
            request.user = TokenUser(claims)
            request.auth = claims
            if not claims.has_roles(*required):
                logger.info("permission denied on %s: a required role is missing", request.path)
                return error_response(403, "permission_denied", "a required role is missing")
            return func(request, *args, **kwargs)

        return wrapper

    return decorate(view) if view is not None else decorate

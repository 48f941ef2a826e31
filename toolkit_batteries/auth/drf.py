"""Django REST framework integration: bearer authentication and a role-aware permission.

::

    from toolkit_batteries.auth.drf import BearerAuthentication, BearerRequired

    class ReportView(APIView):
        authentication_classes = [BearerAuthentication]
        permission_classes = [BearerRequired]
        required_roles = ("admin",)          # optional: every listed role is required

        def get(self, request):
            request.user.id          # the token's subject
            request.auth.roles       # the verified Claims

Every authentication failure (missing, malformed, invalid, expired, revoked) raises DRF's
``AuthenticationFailed`` / ``NotAuthenticated`` with the one generic message, so the
response is ``401`` with ``WWW-Authenticate: Bearer`` (and the toolkit error body under
``toolkit_batteries.http.drf.exception_handler``). Put ``BearerAuthentication`` first in
``authentication_classes``: DRF takes the ``WWW-Authenticate`` value from the first class,
and answers 403 instead of 401 when that class names no scheme.
"""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission

from toolkit_batteries.http.errors import UNAUTHENTICATED_MESSAGE

from .base import Claims
from .bearer import BearerRefused, authenticate_authorization, logger
from .users import TokenUser

__all__ = ["BearerAuthentication", "BearerRequired", "TokenUser"]

#: The message of every 403 ``BearerRequired`` answers for a missing role.
ROLE_MISSING_MESSAGE = "a required role is missing"


class BearerAuthentication(BaseAuthentication):
    """Authenticate ``Authorization: Bearer <token>`` with ``services.auth()``.

    Returns ``(TokenUser, Claims)``; a request without a bearer header is left
    anonymous (``None``), so another authentication class may still handle it and
    ``BearerRequired`` answers 401. Set ``instance`` on a subclass to verify with
    another auth instance.
    """

    keyword = "Bearer"
    instance = "default"

    def authenticate(self, request: Any) -> tuple[TokenUser, Claims] | None:
        """Return the caller and its claims, ``None`` without a bearer credential."""
        # The header from META, as ``bearer_required`` reads it: DRF's
        # ``get_authorization_header`` builds ``request.headers`` (every header of the
        # request, parsed) to read one.
        header = request.META.get("HTTP_AUTHORIZATION", "")
        try:
            claims = authenticate_authorization(header, self.instance, getattr(request, "path", ""))
        except BearerRefused:
            raise exceptions.AuthenticationFailed(
                UNAUTHENTICATED_MESSAGE, code="unauthenticated"
            ) from None
        if claims is None:
            return None
        return TokenUser(claims), claims

    def authenticate_header(self, request: Any) -> str:
        """Name the scheme for ``WWW-Authenticate`` (which makes DRF answer 401)."""
        return self.keyword


class BearerRequired(BasePermission):
    """Require a caller authenticated by a bearer token, holding ``view.required_roles``.

    Not authenticated: 401 with the generic message. Authenticated but missing any of
    the view's ``required_roles`` (a tuple of role names; empty or absent means none):
    403 ``permission_denied``.
    """

    message = ROLE_MISSING_MESSAGE

    def has_permission(self, request: Any, view: Any) -> bool:
        """Raise 401 for an anonymous caller and 403 for a missing role; else allow."""
        user = getattr(request, "user", None)
        if not isinstance(user, TokenUser):
            logger.info("bearer credential missing on %s", request.path)
            raise exceptions.NotAuthenticated(UNAUTHENTICATED_MESSAGE, code="unauthenticated")
        required = tuple(getattr(view, "required_roles", ()) or ())
        if not user.has_roles(*required):
            logger.info("permission denied on %s: a required role is missing", request.path)
            raise exceptions.PermissionDenied(self.message, code="permission_denied")
        return True

"""Django REST framework integration: :class:`HasPermission`.

::

    from toolkit_batteries.auth.drf import BearerAuthentication
    from toolkit_batteries.permission.drf import HasPermission

    class PostViewSet(ModelViewSet):
        authentication_classes = [BearerAuthentication]
        permission_classes = [HasPermission]
        permission_action = {"list": "post.read", "retrieve": "post.read",
                             "create": "post.create", "update": "post.edit",
                             "partial_update": "post.edit", "destroy": "post.delete"}

The caller is the auth battery's verified bearer token (``request.auth``, a ``Claims``);
without one the answer is ``401``. ``permission_action`` is one action string for every
request, or a mapping keyed by the viewset action (``"retrieve"``) or the lower-case HTTP
method (``"get"``); a request it does not cover is a configuration error (``500``), never
an allow.

A request that targets one object (a generic view whose lookup URL keyword is in
``view.kwargs``; set ``lookup_url_kwarg`` on a plain ``APIView`` that calls
``check_object_permissions``) is decided in ``has_object_permission`` on the loaded
object, so owned-only rules see its owner; every other request is decided in
``has_permission`` without a resource. A refusal raises DRF's ``PermissionDenied``:
``403 {"error": {"code": "permission_denied", "message": "permission denied"}}`` under
``toolkit_batteries.http.drf.exception_handler``; on one object, a caller who may not
read it (the mapping's ``retrieve``/``get`` action) gets ``404 not_found`` instead, on
every verb, as for an unknown id (``TOOLKIT_PERMISSION_DENIED_STATUS = 403`` to keep 403).
Set ``instance`` on a subclass to ask another permission instance.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import exceptions
from rest_framework.permissions import BasePermission

from toolkit_batteries.http.errors import UNAUTHENTICATED_MESSAGE

from .base import Subject
from .decorators import DENIED_MESSAGE, logger, subject_from_claims
from .errors import PermissionActionMissingError

__all__ = ["HasPermission", "PermissionActionMissingError"]


def action_for(request: Any, view: Any) -> str:
    """Return the permission action ``view.permission_action`` names for ``request``."""
    declared = getattr(view, "permission_action", None)
    if isinstance(declared, str) and declared:
        return declared
    if isinstance(declared, Mapping):
        for key in (getattr(view, "action", None), str(request.method or "").lower()):
            found = declared.get(key) if key else None
            if isinstance(found, str) and found:
                return found
    raise PermissionActionMissingError(
        f"{type(view).__name__}: permission_action names no action for this request"
    )


def read_action_for(view: Any) -> str | None:
    """Return the action that reads one object of ``view`` (``"retrieve"`` / ``"get"``)."""
    declared = getattr(view, "permission_read_action", None)
    if isinstance(declared, str):
        return declared or None
    actions = getattr(view, "permission_action", None)
    if isinstance(actions, str):
        return actions
    if isinstance(actions, Mapping):
        for key in ("retrieve", "get"):
            found = actions.get(key)
            if isinstance(found, str) and found:
                return found
    return None


def _targets_object(view: Any) -> bool:
    lookup = getattr(view, "lookup_url_kwarg", None) or getattr(view, "lookup_field", None)
    return bool(lookup) and lookup in (getattr(view, "kwargs", None) or {})


class HasPermission(BasePermission):
    """Allow a request when ``services.permission()`` allows the caller the view's action."""

    instance = "default"
    message = DENIED_MESSAGE

    def has_permission(self, request: Any, view: Any) -> bool:
        """Decide a collection request; defer an object request to the object check."""
        subject = self._subject(request)
        action = action_for(request, view)
        if _targets_object(view):
            return True
        return self._decide(request, subject, action, None)

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        """Decide on the loaded object (owned-only rules see its owner).

        A refusal is ``404 not_found`` when the caller may not read the object either
        (:mod:`~toolkit_batteries.permission.denial`), else ``403``.
        """
        from toolkit_batteries import services

        from .denial import hides_refusal

        subject, action = self._subject(request), action_for(request, view)
        owner_field = getattr(view, "permission_owner_field", None) or None
        authorizer = services.permission(self.instance)
        if authorizer.check(subject, action, obj, owner_field=owner_field):
            return True
        logger.info('permission denied on %s: action "%s"', request.path, action)
        if hides_refusal(
            authorizer,
            subject,
            method=str(request.method or ""),
            action=action,
            read_action=read_action_for(view),
            obj=obj,
            owner_field=owner_field,
        ):
            raise exceptions.NotFound(code="not_found")
        raise exceptions.PermissionDenied(self.message, code="permission_denied")

    def _subject(self, request: Any) -> Subject:
        subject = subject_from_claims(getattr(request, "auth", None))
        if subject is None:
            logger.info("permission check without a bearer caller on %s", request.path)
            raise exceptions.NotAuthenticated(UNAUTHENTICATED_MESSAGE, code="unauthenticated")
        return subject

    def _decide(self, request: Any, subject: Subject, action: str, resource: Any) -> bool:
        from toolkit_batteries import services

        if not services.permission(self.instance).check(subject, action, resource):
            logger.info('permission denied on %s: action "%s"', request.path, action)
            raise exceptions.PermissionDenied(self.message, code="permission_denied")
        return True

"""Flags for a request: the subject is the signed-in user, the tenant ``request.tenant``.

::

    from toolkit_batteries.flag import flag_enabled

    def checkout(request):
        if flag_enabled(request, "new_checkout"):
            ...

The subject is ``request.user.pk`` for an authenticated user (anonymous requests have no
subject, so partial rollouts are off for them). The tenant is ``request.tenant`` (a
tenant id string, or an object with an ``id``) when the tenant middleware set it, else
the tenant battery's current tenant, else none.
"""

from __future__ import annotations

from typing import Any

__all__ = ["flag_enabled", "flag_value", "subject_of", "tenant_of"]


def subject_of(request: Any) -> str | None:
    """Return the rollout subject of ``request``: the authenticated user's primary key."""
    user = getattr(request, "user", None)
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    pk = getattr(user, "pk", None)
    return None if pk is None else str(pk)


def tenant_of(request: Any) -> str | None:
    """Return the tenant id of ``request`` (``request.tenant``, else the current tenant)."""
    tenant = getattr(request, "tenant", None)
    if tenant is None:
        try:
            from toolkit_batteries.tenant.context import current_tenant
        except ImportError:  # the tenant battery is not installed in this tree
            return None
        return current_tenant()
    if isinstance(tenant, str):
        return tenant or None
    ident = getattr(tenant, "id", None)
    return None if ident is None else str(ident)


def _service(instance: str) -> Any:
    from toolkit_batteries import services

    return services.flag(instance)


def flag_enabled(
    request: Any, name: str, *, default: bool = False, instance: str = "default"
) -> bool:
    """Tell whether flag ``name`` is on for ``request``'s user and tenant."""
    return _service(instance).enabled(
        name, subject=subject_of(request), tenant=tenant_of(request), default=default
    )


def flag_value(request: Any, name: str, *, default: Any = None, instance: str = "default") -> Any:
    """Return flag ``name``'s value for ``request``'s user and tenant, else ``default``."""
    return _service(instance).value(
        name, subject=subject_of(request), tenant=tenant_of(request), default=default
    )

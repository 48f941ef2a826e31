"""The ``permission`` battery: what a verified caller may do (authorization).

Get the configured authorizer from the registry (``services.permission()``) or a
container (``container.permission()``); pick the adapter in settings: ``noop`` (default,
allows everything), ``rbac`` (the ``rules`` option: roles, actions, deny wins, owned-only)
or ``policyfile`` (a pycasbin model and policy file)::

    services.permission().check(request.auth, "post.edit", post)     # True / False
    services.permission().require(request.auth, "post.edit", post)   # or PermissionDeniedError

DRF views use :class:`toolkit_batteries.permission.drf.HasPermission`; plain views
:func:`toolkit_batteries.permission.decorators.require_permission`. Both take the caller
from the auth battery's verified bearer token. Importing this package imports no vendor
SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Authorizer, PermissionDeniedError, Subject

__all__ = ["Authorizer", "PermissionDeniedError", "Subject"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Authorizer": "base",
    "PermissionDeniedError": "base",
    "Subject": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Authorizer PermissionDeniedError Subject",
)

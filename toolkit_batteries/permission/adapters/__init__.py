"""The permission adapters; pycasbin costs nothing to a project on ``noop`` or ``rbac``
(``casbin`` selects ``policyfile``, from the catalog row).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "noop.NoopAuthorizer rbac.RBACAuthorizer policyfile.PolicyFileAuthorizer"
)

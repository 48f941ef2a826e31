"""The permission adapters, by canonical name (default first, as in the catalog).

Values are dotted paths imported only when an adapter opens, so pycasbin costs nothing
to a project on ``noop`` or ``rbac``. The vendor alias ``casbin`` -> ``policyfile`` lives
in the shared ``VENDOR_ALIASES`` table of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "noop": "toolkit_batteries.permission.adapters.noop.NoopAuthorizer",
    "rbac": "toolkit_batteries.permission.adapters.rbac.RBACAuthorizer",
    "policyfile": "toolkit_batteries.permission.adapters.policyfile.PolicyFileAuthorizer",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers casbin.
ALIASES: dict[str, str] = {}

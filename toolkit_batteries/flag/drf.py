"""DRF integration: a permission class that requires flags to be on for the request.

::

    from toolkit_batteries.flag.drf import FlagRequired, require_flag

    class CheckoutView(APIView):
        permission_classes = [IsAuthenticated, require_flag("new_checkout")]

    class BetaView(APIView):
        permission_classes = [FlagRequired]
        required_flags = ("beta", "beta_reports")     # every one must be on

A request whose flag is off is denied (403, or 401 for an anonymous request, as DRF
decides). Imports DRF, so import this module only where DRF is installed.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from .request import flag_enabled

__all__ = ["FlagRequired", "flag_enabled", "require_flag"]


class FlagRequired(BasePermission):
    """Allow the request only if every flag in the view's ``required_flags`` is on."""

    message = "This feature is not available."
    #: Flags required when the view does not set ``required_flags``.
    flags: tuple[str, ...] = ()
    #: The flag service instance to ask.
    instance: str = "default"

    def has_permission(self, request: Any, view: Any) -> bool:
        names = getattr(view, "required_flags", None) or self.flags
        if isinstance(names, str):
            names = (names,)
        return all(flag_enabled(request, name, instance=self.instance) for name in names)


def require_flag(*names: str, instance: str = "default") -> type[FlagRequired]:
    """Return a permission class that requires flags ``names`` to be on."""
    if not names:
        raise ValueError("require_flag needs at least one flag name")
    return type(
        f"RequireFlag_{'_'.join(names)}",
        (FlagRequired,),
        {"flags": tuple(names), "instance": instance},
    )

"""``single``: one fixed tenant (``id``) for every request; nothing is read from it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import InvalidOptionsError

from ..base import Tenant
from ..context import is_valid_tenant_id

if TYPE_CHECKING:
    from django.http import HttpRequest

__all__ = ["SingleTenant"]


class SingleTenant(Tenant):
    """Every request belongs to the tenant ``id`` (default ``"default"``)."""

    adapter_name = "single"

    def __init__(self, tenant_id: str = "default", **kwargs: Any) -> None:
        """Keep the fixed id (already checked by :meth:`from_options`)."""
        super().__init__(**kwargs)
        #: The one tenant.
        self.tenant_id = tenant_id

    @classmethod
    def from_options(cls, options: Any, instance: str = "default") -> SingleTenant:
        """Check ``id`` (well formed, and listed when ``allowed`` is set)."""
        tenant_id = str(options.id or "default")
        if not is_valid_tenant_id(tenant_id):
            raise InvalidOptionsError("tenant", "id", "is not a valid tenant id", instance=instance)
        allowed = cls._allowed(options, instance)
        if allowed and tenant_id not in allowed:
            raise InvalidOptionsError("tenant", "id", 'is not one of "allowed"', instance=instance)
        return cls(tenant_id, allowed=allowed, instance=instance)

    def resolve(self, request: HttpRequest) -> str:
        """Return the fixed id (checked once, at open)."""
        return self.tenant_id

    def _extract(self, request: HttpRequest) -> str | None:
        return self.tenant_id

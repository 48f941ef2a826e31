"""The tenant service: which tenant a request belongs to.

::

    tenant = services.tenant()
    tenant.resolve(request)          # "acme", or raises TenantError (a 400)
    tenant.check("acme")             # the same rules for an id from elsewhere (a job)

Adapters implement one primitive, :meth:`Tenant._extract` (the raw id a request carries,
or ``None``); this class applies the rules once for all of them: an id must be well
formed (:data:`~toolkit_batteries.tenant.context.TENANT_ID`) and, when ``allowed`` lists
ids, one of them. :class:`~toolkit_batteries.tenant.middleware.TenantMiddleware` turns a
:class:`TenantError` into ``400 invalid_argument`` in the toolkit's error shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError, ToolkitError

from .context import is_valid_tenant_id

if TYPE_CHECKING:
    from django.http import HttpRequest

    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["Tenant", "TenantError"]


class TenantError(ToolkitError):
    """A request names no tenant, a malformed one or an unknown one (HTTP 400).

    ``reason`` is ``"required"``, ``"malformed"``, ``"unknown"`` or ``"ambiguous"``; the
    message never repeats the id the client sent.
    """

    code = "invalid_argument"

    def __init__(self, reason: str, instance: str = "default") -> None:
        self.reason = reason
        self.instance = instance
        super().__init__(f"tenant {reason}" if reason != "required" else "tenant required")


class Tenant(Service):
    """Base of the tenant adapters: the rules, on top of one extraction primitive."""

    service_name: ClassVar[str] = "tenant"

    def __init__(self, *, allowed: tuple[str, ...] = (), instance: str = "default") -> None:
        """Keep the known ids (empty: every well-formed id is known)."""
        self.instance = instance
        self.allowed: frozenset[str] | None = frozenset(allowed) if allowed else None

    @classmethod
    def open(cls, ctx: OpenContext) -> Tenant:
        """Build the adapter from ``ctx.options``; bad options fail here, naming the field."""
        return cls.from_options(ctx.options, ctx.instance)

    @classmethod
    def from_options(cls, options: Any, instance: str = "default") -> Tenant:
        """Build the adapter from decoded :class:`TenantOptions` (adapters override)."""
        raise NotImplementedError(f"{cls.__qualname__} must implement from_options")

    @staticmethod
    def _allowed(options: Any, instance: str) -> tuple[str, ...]:
        allowed = tuple(options.allowed or ())
        if not all(is_valid_tenant_id(item) for item in allowed):
            raise InvalidOptionsError(
                "tenant", "allowed", "holds a malformed tenant id", instance=instance
            )
        return allowed

    # ------------------------------------------------------------------ operations

    def resolve(self, request: HttpRequest) -> str:
        """Return the tenant id of ``request``; raise :class:`TenantError` to refuse it."""
        return self.check(self._extract(request))

    def check(self, tenant: str | None) -> str:
        """Return ``tenant`` if it is well formed and known; raise :class:`TenantError`."""
        if not tenant:
            raise TenantError("required", self.instance)
        if not is_valid_tenant_id(tenant):
            raise TenantError("malformed", self.instance)
        if self.allowed is not None and tenant not in self.allowed:
            raise TenantError("unknown", self.instance)
        return tenant

    # ------------------------------------------------------------------ primitive

    def _extract(self, request: HttpRequest) -> str | None:
        """Return the raw tenant id ``request`` carries, or ``None`` (adapters implement)."""
        raise NotImplementedError

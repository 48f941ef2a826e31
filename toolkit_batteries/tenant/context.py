"""The current tenant of this request, job or command, and the key prefixes built on it.

:class:`~toolkit_batteries.tenant.middleware.TenantMiddleware` sets it for the length of a
request (sync and async alike: a :class:`contextvars.ContextVar` follows the request into
``sync_to_async`` threads and back); :func:`using_tenant` sets it anywhere else (a job, a
management command, a test)::

    from toolkit_batteries.tenant import current_tenant, tenant_prefix, using_tenant

    current_tenant()                        # "acme" inside an acme request, else None
    storage.save(f"{tenant_prefix()}/avatars/{name}", content)    # "acme/avatars/..."
    queue.enqueue("reports", {"tenant": current_tenant(), ...})
    with using_tenant("acme"):             # a job re-entering its tenant
        cache.get("plan")                   # "acme"'s entry, never another tenant's

Django's caches take the tenant into every key through ``KEY_FUNCTION``::

    KEY_FUNCTION = "toolkit_batteries.tenant.cache_key_function"
    CACHES = django_cache_settings(TOOLKIT, overrides={"default": {"KEY_FUNCTION": KEY_FUNCTION}})

A key made outside any tenant gets the segment ``-``, which no tenant id can be (ids
start with a letter or digit), so untenanted entries never collide with a tenant's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = [
    "NO_TENANT",
    "TENANT_ID",
    "cache_key_function",
    "current_tenant",
    "is_valid_tenant_id",
    "tenant_prefix",
    "using_tenant",
]

#: A tenant id: 1-63 characters, letters, digits, ``_`` and ``-``, starting with a letter
#: or digit. Safe in a cache key, a storage path, a queue name and a DNS label.
TENANT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
#: The key segment of "no tenant": not a valid id, so it never names one.
NO_TENANT = "-"

_current: ContextVar[str | None] = ContextVar("toolkit_tenant", default=None)
_match = TENANT_ID.fullmatch


def is_valid_tenant_id(value: object) -> bool:
    """Tell whether ``value`` is a well-formed tenant id."""
    return isinstance(value, str) and _match(value) is not None


def current_tenant() -> str | None:
    """Return the tenant id of the running request or :func:`using_tenant` block, or None."""
    return _current.get()


def tenant_prefix(prefix: str = "", sep: str = "/") -> str:
    """Return ``prefix`` joined to the current tenant id (``"media" -> "media/acme"``).

    Outside any tenant the segment is ``-`` (:data:`NO_TENANT`). With no ``prefix`` the
    tenant segment alone is returned, so ``f"{tenant_prefix()}/avatars"`` is a per-tenant
    storage folder and ``tenant_prefix("jobs", ":")`` a per-tenant queue key prefix.
    """
    tenant = _current.get() or NO_TENANT
    return f"{prefix}{sep}{tenant}" if prefix else tenant


@contextmanager
def using_tenant(tenant: str | None) -> Iterator[str | None]:
    """Make ``tenant`` current for the block (``None``: no tenant); restore on exit.

    Raises ``ValueError`` for a malformed id (the value is not echoed).
    """
    if tenant is not None and not is_valid_tenant_id(tenant):
        raise ValueError("tenant: malformed tenant id")
    token = _current.set(tenant)
    try:
        yield tenant
    finally:
        _current.reset(token)


def cache_key_function(key: str, key_prefix: str, version: int | str) -> str:
    """Django's ``KEY_FUNCTION`` with the current tenant: ``prefix:version:tenant:key``.

    Django's default is ``prefix:version:key``; the tenant segment (``-`` outside any
    tenant) makes an entry stored under one tenant invisible to every other.
    """
    return f"{key_prefix}:{version}:{_current.get() or NO_TENANT}:{key}"


def _set(tenant: str | None) -> object:
    """Set the current tenant; return the token :func:`_reset` takes (the middleware)."""
    return _current.set(tenant)


def _reset(token: object) -> None:
    _current.reset(token)  # type: ignore[arg-type]

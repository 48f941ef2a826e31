"""``header``: the tenant id from a request header, or from the host's subdomain.

* ``header`` names the header; empty (the default) means ``X-Tenant-ID`` without
  ``subdomain_regex`` and no header source at all with it;
* ``subdomain_regex`` (optional) is matched against the host without its port, lowercased
  (``^(?P<tenant>[a-z0-9-]+)\\.example\\.com$``): the group named ``tenant``, else the
  first group, is the id.

In subdomain mode the host decides: a host the pattern does not match (the apex domain,
a bare IP) is a 400, never a tenant picked by a header the client sets. Only with
``header`` also named explicitly may a request carry either; when it carries both they
must agree (``ambiguous`` otherwise). Whatever the source, the id is checked as every id is
(well formed; one of ``allowed`` when that is set).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.http.request import split_domain_port

from toolkit_batteries.core.errors import InvalidOptionsError

from ..base import Tenant, TenantError

if TYPE_CHECKING:
    from django.http import HttpRequest

__all__ = [
    "DEFAULT_HEADER",
    "HeaderTenant",
    "compile_subdomain_regex",
    "effective_header",
    "header_meta_key",
]

#: The header read when ``header`` is empty and there is no ``subdomain_regex``.
DEFAULT_HEADER = "X-Tenant-ID"

#: An HTTP header name (RFC 9110 token).
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def header_meta_key(header: str, instance: str = "default") -> str:
    """Return the ``request.META`` key of ``header`` (``X-Tenant-ID`` -> ``HTTP_X_TENANT_ID``)."""
    if not _HEADER_NAME.fullmatch(header):
        raise InvalidOptionsError(
            "tenant", "header", "is not an HTTP header name", instance=instance
        )
    name = header.upper().replace("-", "_")
    return name if name in {"CONTENT_TYPE", "CONTENT_LENGTH"} else f"HTTP_{name}"


def effective_header(header: str, subdomain_mode: bool) -> str:
    """Return the header to read: ``header``, else X-Tenant-ID, else none in subdomain mode."""
    if header:
        return header
    return "" if subdomain_mode else DEFAULT_HEADER


def compile_subdomain_regex(pattern: str, instance: str = "default") -> re.Pattern[str] | None:
    """Compile ``subdomain_regex`` (``None`` when empty); it needs a group for the id."""
    if not pattern:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error:
        raise InvalidOptionsError(
            "tenant", "subdomain_regex", "is not a valid regular expression", instance=instance
        ) from None
    if compiled.groups < 1:
        raise InvalidOptionsError(
            "tenant",
            "subdomain_regex",
            'needs a group for the tenant id (name it "tenant")',
            instance=instance,
        )
    return compiled


class HeaderTenant(Tenant):
    """The tenant named by a header or by the host's subdomain."""

    adapter_name = "header"

    def __init__(
        self,
        header: str = DEFAULT_HEADER,
        subdomain: re.Pattern[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep the header's ``META`` key (none for ``""``) and the subdomain pattern."""
        super().__init__(**kwargs)
        #: The header name, as configured; ``""``: no header source.
        self.header = header
        self._meta_key = header_meta_key(header, self.instance) if header else ""
        self.subdomain = subdomain
        self._group: int | str = 0
        if subdomain is not None:
            self._group = "tenant" if "tenant" in subdomain.groupindex else 1

    @classmethod
    def from_options(cls, options: Any, instance: str = "default") -> HeaderTenant:
        """Check the header name, the pattern and ``allowed``."""
        subdomain = compile_subdomain_regex(str(options.subdomain_regex or ""), instance)
        return cls(
            effective_header(str(options.header or ""), subdomain is not None),
            subdomain,
            allowed=cls._allowed(options, instance),
            instance=instance,
        )

    def _extract(self, request: HttpRequest) -> str | None:
        from_header = (request.META.get(self._meta_key) or None) if self._meta_key else None
        if self.subdomain is None:
            return from_header
        # get_host() checks ALLOWED_HOSTS; split_domain_port lowercases and drops the port.
        host, _ = split_domain_port(request.get_host())
        match = self.subdomain.fullmatch(host.rstrip("."))
        from_host = (match.group(self._group) or None) if match is not None else None
        if from_header and from_host and from_header != from_host:
            raise TenantError("ambiguous", self.instance)
        return from_header or from_host

"""The outbound rules of the object-store adapters' ``endpoint``.

The URL rules are the project's one set (:func:`toolkit_batteries.core.outbound.check_url`:
https only unless ``allow_insecure``; no credentials, query or fragment; no literal
private address unless ``allow_private``). On top, since boto3 opens its own
connections, the endpoint's host is resolved when the storage opens and every address it
resolves to must be public unless ``allow_private``. Errors name the field, never the
value.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.core.outbound import check_url, is_public

__all__ = ["check_endpoint"]


def check_endpoint(
    url: str,
    *,
    field: str,
    instance: str,
    allow_insecure: bool,
    allow_private: bool,
    resolve: Callable[..., Any] = socket.getaddrinfo,
) -> str:
    """Return ``url`` (no trailing ``/``) if the outbound rules allow it, else raise."""
    text = check_url(
        url,
        service="storage",
        field=field,
        instance=instance,
        allow_insecure=allow_insecure,
        allow_private=allow_private,
    )
    if not allow_private:
        parts = urlsplit(text)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        try:
            infos = resolve(host, port)
        except OSError:
            raise ServiceUnavailableError(
                "storage", f'the host of option "{field}" does not resolve', instance=instance
            ) from None
        if not all(is_public(str(info[4][0])) for info in infos):
            raise InvalidOptionsError(
                "storage",
                field,
                "resolves to a private, loopback or link-local address "
                "(an endpoint there needs allow_private)",
                instance=instance,
            )
    return text.rstrip("/")

"""Turn a request into a rate-limit key: ``"ip"``, ``"user"``, or your own function.

``"ip"`` is ``REMOTE_ADDR``. Behind a reverse proxy every client shares the proxy's
address, so either make the proxy's address-rewriting middleware set ``REMOTE_ADDR``
(trusting only your proxy) or pass a function that reads the header your proxy sets.
This module never parses ``X-Forwarded-For`` itself: a client can write that header.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolkit_batteries.core.loading import import_dotted

__all__ = ["KeyFunction", "client_ip", "resolve_key", "user_or_ip"]

#: A function from a request to a key; ``None`` or ``""`` means "do not limit".
KeyFunction = Callable[[Any], "str | None"]


def client_ip(request: Any) -> str | None:
    """Return the client address (``REMOTE_ADDR``), or ``None`` when there is none."""
    return request.META.get("REMOTE_ADDR") or None


def user_or_ip(request: Any) -> str | None:
    """Return ``user:<pk>`` for an authenticated user, else ``ip:<address>``."""
    user = getattr(request, "user", None)
    if user is not None and getattr(user, "is_authenticated", False):
        ident = getattr(user, "pk", None) or getattr(user, "username", None)
        if ident is not None:
            return f"user:{ident}"
    address = client_ip(request)
    return f"ip:{address}" if address else None


_NAMED: dict[str, KeyFunction] = {"ip": client_ip, "user": user_or_ip}


def resolve_key(key: str | KeyFunction) -> KeyFunction:
    """Return the key function for ``"ip"``, ``"user"``, a dotted path or a callable."""
    if callable(key):
        return key
    if isinstance(key, str):
        named = _NAMED.get(key)
        if named is not None:
            return named
        if "." in key:
            found = import_dotted(key)
            if callable(found):
                return found
    raise ValueError('ratelimit key must be "ip", "user", a dotted path or a callable')

"""Turn a request into a rate-limit key: ``"ip"``, ``"user"``, or your own function.

``"ip"`` is ``REMOTE_ADDR``. Behind a reverse proxy every client shares the proxy's
address; build a key function that believes ``X-Forwarded-For`` only as far as your own
proxies with :func:`forwarded_ip`::

    # myproject/ratelimit_keys.py
    from toolkit_batteries.ratelimit.keys import forwarded_ip

    client = forwarded_ip(trusted=["10.0.0.0/8"])   # your load balancers' networks

and pass ``key="myproject.ratelimit_keys.client"`` (or the function itself). Nothing
here reads ``X-Forwarded-For`` unless you ask: any client can write that header.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from typing import Any

from toolkit_batteries.core.loading import import_dotted

__all__ = ["KeyFunction", "client_ip", "forwarded_ip", "resolve_key", "user_or_ip"]

#: A function from a request to a key; ``None`` or ``""`` means "do not limit".
KeyFunction = Callable[[Any], "str | None"]


def client_ip(request: Any) -> str | None:
    """Return the client address (``REMOTE_ADDR``), or ``None`` when there is none."""
    return request.META.get("REMOTE_ADDR") or None


def forwarded_ip(trusted: Iterable[str], *, header: str = "X-Forwarded-For") -> KeyFunction:
    """Return a key function giving the client address as your trusted proxies saw it.

    ``trusted`` lists the networks of your own reverse proxies (``"10.0.0.0/8"``,
    ``"192.0.2.7"``). When ``REMOTE_ADDR`` is one of them, ``header`` (a comma-separated
    list each proxy appends to) is read from the right, skipping trusted hops, and the
    first address that is not a trusted proxy is the client. A request that did not come
    through a trusted proxy is keyed by ``REMOTE_ADDR``, whatever its header says. An
    entry that is not an address stops the walk at the proxy that forwarded it, so a
    client writing garbage shares that proxy's budget instead of getting fresh ones.
    """
    networks = tuple(ipaddress.ip_network(net.strip(), strict=False) for net in trusted)
    if not networks:
        raise ValueError("forwarded_ip needs at least one trusted proxy network")
    meta_name = "HTTP_" + header.upper().replace("-", "_")

    def is_trusted(address: Any) -> bool:
        return any(address in net for net in networks if net.version == address.version)

    def key(request: Any) -> str | None:
        remote = request.META.get("REMOTE_ADDR") or ""
        try:
            hop = ipaddress.ip_address(remote)
        except ValueError:
            return remote or None
        if not is_trusted(hop):
            return str(hop)
        for entry in reversed(request.META.get(meta_name, "").split(",")):
            try:
                address = ipaddress.ip_address(entry.strip())
            except ValueError:
                return str(hop)
            if not is_trusted(address):
                return str(address)
            hop = address
        return str(hop)

    key.__qualname__ = key.__name__ = "forwarded_ip"
    return key


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

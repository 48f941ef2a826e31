"""The outbound-call rules every battery follows, in one place (no vendor imports).

A battery that calls out (an identity provider, a secrets server, a remote API) obeys two
rules unless its options lift them:

* **https only** unless ``allow_insecure``;
* **public targets only** unless ``allow_private``: no loopback, private, link-local,
  multicast, reserved or unspecified address, judged on the literal host when the URL is
  checked (:func:`check_url`) and again on every address the host resolves to when the
  connection is made (:func:`resolve_public`, :func:`connect`). The socket connects to an
  address that was checked, so a DNS answer cannot change between the check and the
  connection (DNS rebinding).

Transports that apply the connect-time rule to an HTTP client live next to this module,
each importing its client only when imported itself:

* :mod:`.httpx_transport` -- ``GuardedTransport``, an ``httpx`` transport;
* :mod:`.requests_adapter` -- ``GuardedHTTPAdapter`` and ``guarded_session`` (hvac);
* :mod:`.urllib_opener` -- ``guarded_opener``, a standard-library opener.

A refused connection raises :class:`OutboundBlockedError`, a configuration error (not an
``OSError``: HTTP clients neither wrap nor retry it); its message names no host, address
or URL. Catch it and re-raise the battery's own error naming the option.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError

__all__ = [
    "OutboundBlockedError",
    "check_url",
    "connect",
    "connector",
    "host_is_public",
    "is_blocked",
    "is_public",
    "public_addresses",
    "resolve_public",
]

#: ``socket.create_connection``'s "no timeout given" marker (http.client passes it on).
_DEFAULT_TIMEOUT: Any = getattr(socket, "_GLOBAL_DEFAULT_TIMEOUT", None)

#: ``getaddrinfo`` 5-tuples: ``(family, type, proto, canonname, sockaddr)``.
AddressInfo = tuple[Any, Any, int, str, Any]


class OutboundBlockedError(ConfigurationError):
    """An outbound connection was refused by the rules (never names the host)."""

    code = "outbound_blocked"


#: IPv6 prefixes whose low 32 bits carry an IPv4 address a gateway or a host stack
#: turns into an IPv4 connection: NAT64's well-known prefix (RFC 6052), IPv4-compatible
#: (deprecated, RFC 4291) and SIIT's IPv4-translated (RFC 2765).
_EMBEDS_LOW_32 = (
    ipaddress.IPv6Network("64:ff9b::/96"),
    ipaddress.IPv6Network("::/96"),
    ipaddress.IPv6Network("::ffff:0:0:0/96"),
)
#: Local-use NAT64 (RFC 8215): an operator's own translator, never a public address.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """Return the IPv4 address ``ip`` carries (mapped, NAT64, 6to4, compatible), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in network for network in _EMBEDS_LOW_32):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(address: Any) -> bool:
    """Tell whether an IP address (text or ``ipaddress`` object) is globally routable.

    An IPv6 address that carries an IPv4 address (IPv4-mapped ``::ffff:10.0.0.1``, NAT64
    ``64:ff9b::10.0.0.1``, 6to4 ``2002:0a00:0001::``, IPv4-compatible ``::10.0.0.1``,
    IPv4-translated ``::ffff:0:10.0.0.1``) is judged as the IPv4 address it carries, since
    a translator or the host's stack connects there; local-use NAT64 (``64:ff9b:1::/48``)
    is never public. A zone suffix (``fe80::1%eth0``) is ignored; multicast is never
    public. Raises ``ValueError`` for text that is not an IP address.
    """
    if isinstance(address, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        ip = address
    else:
        ip = ipaddress.ip_address(str(address).split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _LOCAL_NAT64:
            return False
        carried = embedded_ipv4(ip)
        if carried is not None:
            ip = carried
    return ip.is_global and not ip.is_multicast


def host_is_public(host: str) -> bool:
    """Tell whether a URL's host may be public, judging what is known without DNS.

    ``localhost`` and ``*.localhost`` names and non-public literal addresses are not;
    other names are judged on their resolved addresses when connecting.
    """
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return False
    try:
        return is_public(name)
    except ValueError:
        return True


def check_url(
    url: str,
    *,
    service: str,
    field: str,
    instance: str = "default",
    allow_insecure: bool = False,
    allow_private: bool = False,
    insecure_option: str = "allow_insecure",
    private_option: str = "allow_private",
) -> str:
    """Return ``url`` (surrounding blanks stripped) if the rules allow it, else raise.

    Rules: an http(s) URL with a host and a port other than 0; https unless
    ``allow_insecure``; no credentials, query or fragment; not a ``localhost`` name or a
    non-public literal address unless ``allow_private``. ``insecure_option`` and
    ``private_option`` are the option names the messages point to. Raises
    :class:`InvalidOptionsError` naming ``service``, ``instance`` and ``field``, never the
    value.
    """

    def invalid(reason: str) -> InvalidOptionsError:
        return InvalidOptionsError(service, field, reason, instance=instance)

    text = (url or "").strip()
    if not text:
        raise invalid("is required")
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        raise invalid("is not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not host:
        raise invalid("must be an https:// URL")
    if port == 0:
        raise invalid("has port 0")
    if scheme == "http" and not allow_insecure:
        raise invalid(f"must use https (http needs {insecure_option})")
    if parts.username is not None or parts.password is not None:
        raise invalid("must not carry credentials")
    if parts.query or parts.fragment:
        raise invalid("must not have a query or a fragment")
    if not allow_private and not host_is_public(host):
        raise invalid(
            "points at a non-public host (it resolves to a private, loopback or link-local "
            f"address); loopback, private or link-local targets need {private_option}"
        )
    return text


def resolve_public(host: str, port: int, *, allow_private: bool) -> list[AddressInfo]:
    """Resolve ``host`` once and return its TCP addresses (``getaddrinfo`` tuples).

    Unless ``allow_private``, every address must be public, else
    :class:`OutboundBlockedError` (one bad answer is enough: a name that mixes public and
    private addresses is refused). Connect to the returned ``sockaddr`` values, never to
    ``host`` again. ``socket.gaierror`` propagates when the name does not resolve.
    """
    return public_addresses(
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM), allow_private=allow_private
    )


def public_addresses(infos: list[AddressInfo], *, allow_private: bool) -> list[AddressInfo]:
    """Return one name's resolved addresses, each once, after the rule of :func:`resolve_public`.

    Split from the lookup so a resolver of another kind (anyio's, in the async transport)
    applies the same rule with the same refusal.
    """
    if not allow_private:
        for info in infos:
            if not is_public(str(info[4][0])):
                raise OutboundBlockedError(
                    "an outbound call was refused: the host resolves to a private, loopback "
                    "or link-local address (allow_private is off)"
                )
    seen: set[Any] = set()
    unique: list[AddressInfo] = []
    for info in infos:
        if info[4] not in seen:
            seen.add(info[4])
            unique.append(info)
    return unique


def connect(
    address: tuple[str, int],
    timeout: float | None = None,
    source_address: tuple[str, int] | None = None,
    *,
    allow_private: bool,
    socket_options: Any = None,
) -> socket.socket:
    """Like ``socket.create_connection``, to an address :func:`resolve_public` checked.

    Tries each checked address in turn; raises the last ``OSError`` if none connects.
    """
    host, port = address
    error: OSError | None = None
    for family, kind, proto, _, sockaddr in resolve_public(host, port, allow_private=allow_private):
        sock = socket.socket(family, kind, proto)
        try:
            for option in socket_options or ():
                sock.setsockopt(*option)
            if timeout is not None and timeout is not _DEFAULT_TIMEOUT:
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    raise error or OSError("no address to connect to")


def connector(*, allow_private: bool) -> Callable[..., socket.socket]:
    """Return a drop-in for ``socket.create_connection`` that applies :func:`connect`."""

    def create_connection(
        address: tuple[str, int], timeout: Any = None, source_address: Any = None
    ) -> socket.socket:
        return connect(address, timeout, source_address, allow_private=allow_private)

    return create_connection


def is_blocked(exc: BaseException | None) -> bool:
    """Tell whether ``exc`` is, or was caused by, an :class:`OutboundBlockedError`.

    Follows ``__cause__``, ``__context__`` and a ``reason`` attribute (``URLError``,
    urllib3's ``MaxRetryError``), for callers that get the error wrapped by a client.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, OutboundBlockedError):
            return True
        seen.add(id(exc))
        reason = getattr(exc, "reason", None)
        if isinstance(reason, BaseException) and is_blocked(reason):
            return True
        exc = exc.__cause__ or exc.__context__
    return False

"""Issue 23 defect 16: the SSRF guard judges the IPv4 address an IPv6 address carries.

On the landed code ``is_public`` accepted NAT64 (``64:ff9b::/96``, ``64:ff9b:1::/48``),
6to4 (``2002::/16``) and IPv4-compatible (``::/96``) addresses that embed private IPv4
targets: a NAT64 gateway or a 6to4 relay turns ``64:ff9b::a9fe:a9fe`` into the cloud
metadata address ``169.254.169.254``. The guard is exercised the way every outbound
battery uses it: ``check_url`` on a configured endpoint, and ``connect`` on an address
resolved at call time.
"""

from __future__ import annotations

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import (
    OutboundBlockedError,
    check_url,
    connect,
    host_is_public,
    is_public,
)

#: IPv6 forms of private, loopback and link-local IPv4 targets.
CARRIERS_OF_PRIVATE = [
    "64:ff9b::a00:1",  # NAT64 well-known prefix -> 10.0.0.1
    "64:ff9b::7f00:1",  # -> 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # -> 169.254.169.254 (cloud metadata)
    "64:ff9b::c0a8:101",  # -> 192.168.1.1
    "64:ff9b:1::a00:1",  # local-use NAT64 (RFC 8215): never public
    "64:ff9b:1::808:808",
    "2002:a00:1::1",  # 6to4 -> 10.0.0.1
    "2002:7f00:1::",  # 6to4 -> 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 -> 169.254.169.254
    "::a00:1",  # IPv4-compatible -> 10.0.0.1
    "::7f00:1",  # -> 127.0.0.1
    "::ffff:0:a00:1",  # IPv4-translated (SIIT) -> 10.0.0.1
    "::ffff:10.0.0.1",  # IPv4-mapped (was already refused)
    "::ffff:169.254.169.254",
]
#: The same forms carrying a public IPv4 address stay usable.
CARRIERS_OF_PUBLIC = ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"]


@pytest.mark.parametrize("address", CARRIERS_OF_PRIVATE)
def test_an_ipv6_address_carrying_a_private_ipv4_is_not_public(address: str) -> None:
    assert not is_public(address)
    assert not host_is_public(f"[{address}]")


@pytest.mark.parametrize("address", CARRIERS_OF_PUBLIC)
def test_an_ipv6_address_carrying_a_public_ipv4_is_judged_by_it(address: str) -> None:
    assert is_public(address)


@pytest.mark.parametrize("address", CARRIERS_OF_PRIVATE)
def test_a_configured_endpoint_on_such_an_address_is_refused(address: str) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        check_url(f"https://[{address}]/hook", service="webhook", field="endpoint")
    assert address not in str(caught.value)
    # allow_private is the documented way to loosen it.
    check_url(f"https://[{address}]/hook", service="webhook", field="endpoint", allow_private=True)


@pytest.mark.parametrize("address", CARRIERS_OF_PRIVATE)
def test_connecting_to_such_an_address_is_blocked_before_any_packet(address: str) -> None:
    with pytest.raises(OutboundBlockedError):
        connect((address, 443), timeout=2, allow_private=False)

"""Where the ``otlp`` adapter sends its data, validated without any import of the SDK.

Shared by the adapter's ``open`` and by ``checks.py``, so both refuse the same settings:

* ``endpoint`` is required; ``host:port`` becomes ``https://host:port`` (or
  ``http://host:port`` with ``insecure``); a URL must be ``http`` or ``https`` with a
  host and no credentials, query or fragment;
* plaintext (``insecure``, or an ``http://`` URL) only to a loopback host
  (``localhost``, ``127.0.0.0/8``, ``::1``): a telemetry stream carries the ``headers``
  (often an API key) and must not cross a network in the clear;
* ``cert_file`` and ``key_file`` come together.

Messages name the instance and the option, never the value.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from toolkit_batteries.core.errors import InvalidOptionsError

from .base import endpoint_url

__all__ = ["is_loopback", "otlp_base_url"]


def is_loopback(host: str) -> bool:
    """Tell whether ``host`` (a literal or a ``localhost`` name) is this machine."""
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def otlp_base_url(options: Any, instance: str = "default") -> str:
    """Return the collector's base URL (no path) or raise :class:`InvalidOptionsError`."""

    def bad(field: str, reason: str) -> InvalidOptionsError:
        return InvalidOptionsError("observability", field, reason, instance=instance)

    raw = (options.endpoint or "").strip()
    if not raw:
        raise bad("endpoint", "is required by the otlp adapter (collector host:port)")
    url = endpoint_url(raw, insecure=options.insecure)
    try:
        parts = urlsplit(url)
        host, _port = parts.hostname, parts.port
    except ValueError:
        raise bad("endpoint", "is not a host:port or an http(s) URL") from None
    if parts.scheme not in ("http", "https") or not host:
        raise bad("endpoint", "is not a host:port or an http(s) URL")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise bad("endpoint", "must not carry credentials, a query or a fragment; use headers")
    if parts.path not in ("", "/"):
        raise bad("endpoint", "must not carry a path; /v1/traces and /v1/metrics are added")
    plaintext = options.insecure or parts.scheme == "http"
    if plaintext and not is_loopback(host):
        raise bad(
            "insecure",
            "is allowed only for a loopback endpoint; use TLS to reach a remote collector",
        )
    if bool(options.cert_file) != bool(options.key_file):
        raise bad(
            "cert_file" if options.key_file else "key_file",
            "is required with the other half of the client certificate (cert_file, key_file)",
        )
    if plaintext and parts.scheme == "https":
        url = "http://" + url.split("://", 1)[1]
    return url.rstrip("/")

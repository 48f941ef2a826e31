"""A standard-library ``urllib`` opener that applies the outbound rules at connect time.

For batteries that fetch a few documents without a vendor HTTP client. The opener is
assembled by hand (not ``build_opener``) so no default handler sneaks in: no environment
proxies, no ``file:``/``ftp:``/``data:`` URLs, no redirect following (a 3xx raises
``HTTPError``). https verifies with the system roots and a TLS 1.2 floor; plain http
raises :class:`~toolkit_batteries.core.outbound.OutboundBlockedError` unless
``allow_insecure``. Connections go through :func:`~toolkit_batteries.core.outbound.connect`.
"""

from __future__ import annotations

import http.client
import ssl
import urllib.request
from typing import Any

from . import OutboundBlockedError, connector

__all__ = ["guarded_opener"]


def guarded_opener(
    *, allow_insecure: bool, allow_private: bool, context: ssl.SSLContext | None = None
) -> urllib.request.OpenerDirector:
    """Return an opener whose connections obey the outbound rules (see the module doc)."""
    connect = connector(allow_private=allow_private)

    class GuardedHTTP(http.client.HTTPConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    class GuardedHTTPS(http.client.HTTPSConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    if context is None:
        context = ssl.create_default_context()
        context.minimum_version = ssl.TLSVersion.TLSv1_2
    tls = context

    class HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            if not allow_insecure:
                raise OutboundBlockedError(
                    "an outbound call was refused: plain http (allow_insecure is off)"
                )
            return self.do_open(GuardedHTTP, req)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(GuardedHTTPS, req, context=tls)

    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.UnknownHandler(),
        HTTPHandler(),
        HTTPSHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener

"""A ``requests`` transport (``HTTPAdapter``) that applies the outbound rules at connect time.

Its urllib3 connections resolve the host once, refuse non-public addresses unless
``allow_private`` (:class:`~toolkit_batteries.core.outbound.OutboundBlockedError`, which
urllib3 and requests let through unwrapped and unretried) and connect to an address they
checked; TLS still verifies and sends SNI for the URL's host name. :func:`guarded_session`
returns a session built on it (what hvac and other requests-based SDKs take)::

    session = guarded_session(allow_insecure=False, allow_private=False)
"""

from __future__ import annotations

import socket
from typing import Any

import requests
import requests.adapters
import urllib3.connection
import urllib3.connectionpool
import urllib3.exceptions
import urllib3.util.connection

from . import log_redaction, resolve_public

__all__ = ["GuardedHTTPAdapter", "guarded_session"]


def _guarded_connection(base: type, allow_private: bool) -> type:
    """Subclass urllib3 connection ``base`` so it connects to checked addresses only."""

    class Guarded(base):  # type: ignore[misc, valid-type]
        def _new_conn(self) -> socket.socket:
            host = self._dns_host
            try:
                infos = resolve_public(host, self.port, allow_private=allow_private)
            except socket.gaierror as exc:
                raise urllib3.exceptions.NameResolutionError(host, self, exc) from None
            error: OSError | None = None
            for info in infos:
                try:
                    return urllib3.util.connection.create_connection(
                        (str(info[4][0]), self.port),
                        self.timeout,
                        source_address=self.source_address,
                        socket_options=self.socket_options,
                    )
                except TimeoutError:
                    raise urllib3.exceptions.ConnectTimeoutError(
                        self, f"Connection timed out (connect timeout={self.timeout})"
                    ) from None
                except OSError as exc:
                    error = exc
            raise urllib3.exceptions.NewConnectionError(
                self, f"Failed to establish a new connection: {error}"
            )

    return Guarded


class GuardedHTTPAdapter(requests.adapters.HTTPAdapter):
    """A requests transport whose pools open guarded connections (no retries by default)."""

    def __init__(self, *, allow_private: bool, **kwargs: Any) -> None:
        self._allow_private = allow_private
        log_redaction.install()  # urllib3 logs every request's path, query included
        kwargs.setdefault("max_retries", 0)
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        allow = self._allow_private

        class Pool(urllib3.connectionpool.HTTPConnectionPool):
            ConnectionCls = _guarded_connection(urllib3.connection.HTTPConnection, allow)

        class TLSPool(urllib3.connectionpool.HTTPSConnectionPool):
            ConnectionCls = _guarded_connection(urllib3.connection.HTTPSConnection, allow)

        self.poolmanager.pool_classes_by_scheme = {"http": Pool, "https": TLSPool}

    def proxy_manager_for(self, *args: Any, **kwargs: Any) -> Any:
        raise requests.exceptions.InvalidProxyURL("proxies bypass the outbound rules")


def guarded_session(*, allow_insecure: bool, allow_private: bool) -> requests.Session:
    """Return a requests session: guarded connections, no redirects, no environment proxies.

    ``http://`` is mounted only with ``allow_insecure``; without it a plain-http URL has no
    transport and fails (``requests.exceptions.InvalidSchema``).
    """
    session = requests.Session()
    session.trust_env = False
    session.max_redirects = 0
    session.adapters.clear()
    session.mount("https://", GuardedHTTPAdapter(allow_private=allow_private))
    if allow_insecure:
        session.mount("http://", GuardedHTTPAdapter(allow_private=allow_private))
    return session

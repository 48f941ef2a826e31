"""An ``httpx`` transport that applies the outbound rules at connect time.

Built on the clients' documented extension points only: :class:`GuardedTransport` is an
``httpx.BaseTransport`` (``httpx.AsyncBaseTransport`` for :class:`AsyncGuardedTransport`)
over an ``httpcore`` connection pool whose ``network_backend`` resolves each host once,
refuses non-public addresses unless ``allow_private`` (:class:`OutboundBlockedError`),
and connects to an address it checked. TLS still verifies the certificate and sends SNI
for the URL's host name (httpcore passes the origin's host to ``start_tls``), so
connecting by address changes nothing but the DNS race.

Use it with ``follow_redirects=False`` and ``trust_env=False`` (an environment proxy
would be dialed instead of the target, bypassing the check)::

    client = httpx.Client(transport=GuardedTransport(allow_private=False),
                          follow_redirects=False, trust_env=False)

Plain ``http://`` URLs are refused (``OutboundBlockedError``) unless ``allow_insecure``.

httpx times each network operation, not a request: a peer answering one byte per
read keeps a call alive indefinitely. :func:`deadline` bounds every operation of the
calls made inside it by one shared deadline (connect, TLS, each write, each read)::

    with deadline(2.0):
        client.post(url, content=body)      # httpx.TimeoutException once 2 s have passed
"""

from __future__ import annotations

import contextlib
import contextvars
import ssl
import time
import typing
from collections.abc import AsyncIterable, Iterable, Iterator
from typing import Any, ClassVar

import anyio
import certifi
import httpcore
import httpx

from . import OutboundBlockedError, log_redaction, public_addresses, resolve_public

__all__ = ["AsyncGuardedTransport", "GuardedBackend", "GuardedTransport", "deadline"]

#: The monotonic time by which the current call's network operations must end.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "toolkit_outbound_deadline", default=None
)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Bound every network operation of sync calls made inside to ``seconds`` from now."""
    token = _DEADLINE.set(time.monotonic() + float(seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    """Return ``timeout`` cut to what is left of the deadline; raise ``error`` past it."""
    end = _DEADLINE.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise error("the call's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation honours :func:`deadline` (if one is set)."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


#: httpcore's errors -> httpx's (most specific first), as ``httpx.HTTPTransport`` maps them.
_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


def _mapped(exc: Exception) -> Exception:
    for source, target in _ERRORS:
        if isinstance(exc, source):
            return target(str(exc))
    return exc


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    """Raise httpcore's errors as httpx's: the one translation both transports and their
    response streams share, so callers catch ``httpx`` errors whichever twin they use."""
    try:
        yield
    except Exception as exc:
        mapped = _mapped(exc)
        if mapped is exc:
            raise
        raise mapped from exc


def _core_request(request: httpx.Request, allow_insecure: bool) -> httpcore.Request:
    if request.url.scheme != "https" and not allow_insecure:
        raise OutboundBlockedError(
            "an outbound call was refused: plain http (allow_insecure is off)"
        )
    return httpcore.Request(
        method=request.method,
        url=httpcore.URL(
            scheme=request.url.raw_scheme,
            host=request.url.raw_host,
            port=request.url.port,
            target=request.url.raw_path,
        ),
        headers=request.headers.raw,
        content=request.stream,
        extensions=request.extensions,
    )


def _ssl_context(ssl_context: ssl.SSLContext | None) -> ssl.SSLContext:
    if ssl_context is not None:
        return ssl_context
    context = ssl.create_default_context(cafile=certifi.where())  # httpx's own roots
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


class GuardedBackend(httpcore.SyncBackend):
    """An httpcore network backend: resolve once, check, connect to a checked address."""

    def __init__(self, *, allow_private: bool) -> None:
        self.allow_private = allow_private

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            infos = resolve_public(host, port, allow_private=self.allow_private)
        except OSError as exc:  # the name does not resolve
            raise httpcore.ConnectError(f"name resolution failed ({type(exc).__name__})") from None
        error: Exception | None = None
        for info in infos:
            try:  # a literal address: the base class does no DNS lookup
                stream = super().connect_tcp(
                    str(info[4][0]),
                    port,
                    _bounded(timeout, httpcore.ConnectTimeout),
                    local_address,
                    socket_options,
                )
                return _DeadlineStream(stream)
            except httpcore.ConnectError as exc:
                error = exc
        raise error or httpcore.ConnectError("no address to connect to")


class AsyncGuardedBackend(httpcore.AnyIOBackend):
    """The async twin of :class:`GuardedBackend` (asyncio or trio, through anyio)."""

    def __init__(self, *, allow_private: bool) -> None:
        self.allow_private = allow_private

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        import socket

        try:
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpcore.ConnectError(f"name resolution failed ({type(exc).__name__})") from None
        error: Exception | None = None
        for info in public_addresses(list(infos), allow_private=self.allow_private):
            try:
                return await super().connect_tcp(
                    str(info[4][0]), port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                error = exc
        raise error or httpcore.ConnectError("no address to connect to")


class _Stream(httpx.SyncByteStream):
    def __init__(self, stream: typing.Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> typing.Iterator[bytes]:
        with _httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class _AsyncStream(httpx.AsyncByteStream):
    def __init__(self, stream: typing.AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        with _httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            await aclose()


class _GuardedPool:
    """What the sync and async transports share, so the two cannot drift apart: the
    outbound flags, a pool whose every connection goes through a guarded backend, and the
    response built from httpcore's."""

    _pool_class: ClassVar[type]
    _backend_class: ClassVar[type]

    def __init__(
        self,
        *,
        allow_private: bool,
        allow_insecure: bool = False,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int | None = 10,
        **pool: Any,
    ) -> None:
        self.allow_private = allow_private
        self.allow_insecure = allow_insecure
        log_redaction.install()  # httpx logs every request's URL, query included
        self._pool = self._pool_class(
            ssl_context=_ssl_context(ssl_context),
            network_backend=self._backend_class(allow_private=allow_private),
            max_connections=max_connections,
            **pool,
        )

    def _response(self, response: httpcore.Response, stream: Any) -> httpx.Response:
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
        )


class GuardedTransport(_GuardedPool, httpx.BaseTransport):
    """An ``httpx`` transport whose connections obey the outbound rules.

    ``ssl_context`` defaults to the certifi roots httpx uses, with a TLS 1.2 floor; pool limits
    are httpcore's keyword arguments (``max_connections`` ...).
    """

    _pool_class = httpcore.ConnectionPool
    _backend_class = GuardedBackend

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._response(*self.send(request))

    def send(self, request: Any) -> tuple[httpcore.Response, httpx.SyncByteStream]:
        """Send ``request`` (an ``httpx.Request``, or one of the same shape such as
        ``httpx2``'s) through the guarded pool; return httpcore's answer and its body stream.

        A bridge from an httpx-compatible client builds its own response from these, so
        each call is converted once instead of through an ``httpx.Response`` as well.
        Raises httpx's errors, as the body stream does.
        """
        core = _core_request(request, self.allow_insecure)
        with _httpx_errors():
            response = self._pool.handle_request(core)
        assert isinstance(response.stream, Iterable)  # not typing's alias: a slower check
        return response, _Stream(response.stream)

    def close(self) -> None:
        self._pool.close()


class AsyncGuardedTransport(_GuardedPool, httpx.AsyncBaseTransport):
    """The async twin of :class:`GuardedTransport` (for ``httpx.AsyncClient``)."""

    _pool_class = httpcore.AsyncConnectionPool
    _backend_class = AsyncGuardedBackend

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        core = _core_request(request, self.allow_insecure)
        with _httpx_errors():
            response = await self._pool.handle_async_request(core)
        assert isinstance(response.stream, AsyncIterable)
        return self._response(response, _AsyncStream(response.stream))

    async def aclose(self) -> None:
        await self._pool.aclose()

"""An ``httpx2`` transport that sends through the toolkit's guarded ``httpx`` transport.

The first two providers' SDKs take an ``httpx2.Client`` (the successor package of httpx,
with its own classes), while the outbound rules are implemented once, as an ``httpx``
transport (:class:`~toolkit_batteries.core.outbound.httpx_transport.GuardedTransport`).
:class:`BridgeTransport` converts each ``httpx2`` request into an ``httpx`` request for
that transport, and its answer (streamed, not read ahead) back, mapping ``httpx``
errors to the ``httpx2`` errors of the same name so the SDKs recognise time-outs and
connection errors. The guard itself is not re-implemented here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any

import httpx
import httpx2

from ._common import NoCookies, Settings, transport

__all__ = ["BridgeTransport", "guarded_client2"]


@functools.lru_cache(maxsize=256)
def _url(text: str) -> httpx.URL:
    """Parse a URL once: an instance calls a handful of endpoints (``httpx.URL`` is immutable)."""
    return httpx.URL(text)


def _mapped(exc: httpx.HTTPError) -> Exception:
    target = getattr(httpx2, type(exc).__name__, None)
    if isinstance(target, type) and issubclass(target, httpx2.HTTPError):
        try:
            return target(str(exc))
        except TypeError:
            pass
    return httpx2.TransportError(str(exc))


class _Stream(httpx2.SyncByteStream):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._response.iter_raw()
        except httpx.HTTPError as exc:
            raise _mapped(exc) from exc

    def close(self) -> None:
        self._response.close()


class BridgeTransport(httpx2.BaseTransport):
    """An ``httpx2`` transport over an ``httpx`` transport (the guarded one)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        outgoing = httpx.Request(
            request.method,
            _url(str(request.url)),
            headers=list(request.headers.raw),
            content=body,
            extensions=dict(request.extensions),
        )
        try:
            answer = self._inner.handle_request(outgoing)
        except httpx.HTTPError as exc:
            raise _mapped(exc) from exc
        stream: Iterable[bytes] = _Stream(answer)
        return httpx2.Response(
            status_code=answer.status_code,
            headers=list(answer.headers.raw),
            stream=stream,  # type: ignore[arg-type]
            extensions=_extensions(answer.extensions),
        )

    def close(self) -> None:
        self._inner.close()


def _extensions(extensions: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in extensions.items() if k in ("http_version", "reason_phrase")}


def guarded_client2(settings: Settings) -> httpx2.Client:
    """Return an ``httpx2.Client`` whose connections obey the outbound rules."""
    client = httpx2.Client(
        transport=BridgeTransport(transport(settings)),
        timeout=settings.timeout,
        follow_redirects=False,
        trust_env=False,
    )
    client.cookies = NoCookies()  # type: ignore[assignment]  # calls carry the key alone
    return client

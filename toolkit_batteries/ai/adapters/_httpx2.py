"""An ``httpx2`` transport that sends through the toolkit's guarded ``httpx`` transport.

The three SDKs run on an ``httpx2.Client`` (the successor package of httpx, with its own
classes; ``google-genai`` accepts an ``httpx`` one too, but ``httpx2`` is its default and
does less work per call), while the outbound rules are implemented once, as an ``httpx``
transport (:class:`~toolkit_batteries.core.outbound.httpx_transport.GuardedTransport`).
:class:`BridgeTransport` hands each ``httpx2`` request to that transport's guarded pool
and turns its answer (streamed, not read ahead) into the ``httpx2`` response, mapping
``httpx`` errors to the ``httpx2`` errors of the same name so the SDKs recognise
time-outs and connection errors. The guard itself is not re-implemented here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import httpx
import httpx2

from toolkit_batteries.core.outbound.httpx_transport import GuardedTransport

from ._common import NoCookies, Settings, transport

__all__ = ["BridgeTransport", "guarded_client2"]


def _mapped(exc: httpx.HTTPError) -> Exception:
    target = getattr(httpx2, type(exc).__name__, None)
    if isinstance(target, type) and issubclass(target, httpx2.HTTPError):
        try:
            return target(str(exc))
        except TypeError:
            pass
    return httpx2.TransportError(str(exc))


class _Stream(httpx2.SyncByteStream):
    """The guarded transport's body stream, its ``httpx`` errors raised as ``httpx2``'s."""

    def __init__(self, stream: httpx.SyncByteStream) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except httpx.HTTPError as exc:
            raise _mapped(exc) from exc

    def close(self) -> None:
        self._stream.close()


class BridgeTransport(httpx2.BaseTransport):
    """An ``httpx2`` transport over the guarded ``httpx`` transport.

    The ``httpx2`` request goes to :meth:`GuardedTransport.send` as it is (it has the
    shape of an ``httpx`` one) and httpcore's answer becomes the ``httpx2`` response
    directly: one conversion each way, as the SDK's own transport does, instead of an
    intermediate ``httpx.Request`` and ``httpx.Response`` (their header normalisation was
    most of this adapter's cost above the raw SDK).
    """

    def __init__(self, inner: GuardedTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            answer, body = self._inner.send(request)
        except httpx.HTTPError as exc:
            raise _mapped(exc) from exc
        stream: Iterable[bytes] = _Stream(body)
        return httpx2.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=stream,  # type: ignore[arg-type]
            extensions=_extensions(answer.extensions),
        )

    def close(self) -> None:
        self._inner.close()


def _extensions(extensions: Mapping[str, Any]) -> dict[str, Any]:
    """Keep what describes the answer: httpcore's ``network_stream`` is not httpcore2's."""
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

"""The ``noop`` adapter: spans and metrics cost a function call and go nowhere."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..base import Observability, SpanHandle

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["NoopObservability"]

_HANDLE = SpanHandle()


class _NoopSpan(AbstractContextManager):
    __slots__ = ()

    def __enter__(self) -> SpanHandle:
        return _HANDLE

    def __exit__(self, *exc: object) -> None:
        return None


_SPAN = _NoopSpan()


class NoopObservability(Observability):
    """Discards everything; ``span()`` skips even the attribute cleaning."""

    adapter_name = "noop"

    @classmethod
    def open(cls, ctx: OpenContext) -> NoopObservability:
        return cls._open_plain(ctx)

    def span(self, name: str, **attributes: Any) -> Any:  # type: ignore[override]
        if not name or not isinstance(name, str):
            raise ValueError("span name must be a non-empty string")
        return _SPAN

    def _start(self, name: str, attributes: dict[str, Any]) -> Any:
        return _SPAN

    def _metric(self, kind: str, name: str, value: float, attributes: dict[str, Any]) -> None:
        return None

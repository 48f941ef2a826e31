"""What the four adapters share: checked options, guarded clients, one error mapping.

Imported by the adapter modules only (it imports httpx). Built on the provider base
(:mod:`toolkit_batteries.core.outbound.provider`): every client sits on the guarded
transport with ``follow_redirects=False`` and ``trust_env=False`` (https only unless
``allow_insecure``; every address the host resolves to is checked when connecting unless
``allow_private``), and every failure goes through :func:`~toolkit_batteries.core.
outbound.provider.failure_of`. :class:`ProviderAI` is the adapters' common class: an
adapter adds its SDK client, its request translation and :meth:`ProviderAI._body`, where
its provider's error body keeps the error type and message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.cookiejar import CookieJar
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.core.outbound import provider

from ..base import AI, RETRYABLE_STATUSES, AIProviderError
from ..base import seconds as _seconds

try:  # the guarded transport is built on httpx and httpcore
    from toolkit_batteries.core.outbound.httpx_transport import GuardedTransport
except ImportError:  # pragma: no cover - the ai extra is part of dev installs
    raise MissingExtraError("ai", "llm_a/llm_b/llm_c/llm_d", "ai", "httpx") from None

__all__ = [
    "NoCookies",
    "ProviderAI",
    "Settings",
    "blocked",
    "primed",
    "provider_turns",
    "scrub",
    "settings_of",
]

_BLOCKED = (
    "resolves to a private, loopback or link-local address; loopback, private or "
    "link-local targets need allow_private"
)
#: AI statuses worth another attempt besides 5xx (409: a provider's "overloaded" conflict).
_RETRY = frozenset(RETRYABLE_STATUSES)


@dataclass(frozen=True, slots=True)
class Settings:
    """The options an adapter's client is built from (``api_key`` never shown)."""

    api_key: str
    endpoint: provider.Endpoint
    model: str
    timeout: float

    @property
    def base_url(self) -> str:
        return self.endpoint.url

    @property
    def instance(self) -> str:
        return self.endpoint.instance

    def __repr__(self) -> str:
        return f"<ai settings {self.instance} model={self.model!r}>"


def settings_of(ctx: OpenContext, *, default_base_url: str) -> Settings:
    """Check the options of ``ctx`` (key present, URL allowed) and log the relaxations."""
    options, instance = ctx.options, ctx.instance
    rule = {"service": "ai", "adapter": ctx.adapter, "instance": instance}
    if not options.api_key:
        provider.required("", field="api_key", **rule)
    base_url = provider.required(
        (options.base_url or "").strip() or default_base_url, field="base_url", **rule
    )
    ep = provider.endpoint(
        options, service="ai", field="base_url", default="", url=base_url, instance=instance
    )
    provider.warn_relaxed(ctx.logger, ep)
    return Settings(
        api_key=options.api_key,
        endpoint=ep,
        model=(options.model or "").strip(),
        timeout=_seconds(options.timeout),
    )


def transport(settings: Settings) -> GuardedTransport:
    """Return the guarded transport (no certificate check with ``insecure_skip_verify``)."""
    guarded = provider.httpx_transport(settings.endpoint, max_connections=20)
    assert isinstance(guarded, GuardedTransport)
    return guarded


class NoCookies(CookieJar):
    """A cookie jar that keeps nothing and adds nothing.

    A provider API authenticates every call by its key; a cookie it sets (a load
    balancer's affinity) is not needed, and keeping it would carry state from one call
    to the next.
    """

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def add_cookie_header(self, request: Any) -> None:
        return None


def blocked(instance: str) -> InvalidOptionsError:
    """Return the error of a call the outbound rules refused."""
    return InvalidOptionsError("ai", "base_url", _BLOCKED, instance=instance)


def provider_turns(
    messages: list[dict[str, Any]],
    answer: Callable[[dict[str, Any]], dict[str, Any]],
    turn: Callable[[dict[str, Any]], dict[str, Any]],
    field: str,
) -> list[dict[str, Any]]:
    """Return the neutral messages as a provider's turns; system text is left out (it
    travels apart, in the request's own field).

    A tool's answer becomes ``answer(message)``, a block of a user turn
    ``{"role": "user", field: [...]}``; the answers to parallel calls share that one turn,
    as both providers that take turns this way require. Any other message is
    ``turn(message)``.
    """
    out: list[dict[str, Any]] = []
    answering = False
    for message in messages:
        role = message["role"]
        if role == "system":
            continue
        if role != "tool":
            out.append(turn(message))
        elif answering:
            out[-1][field].append(answer(message))
        else:
            out.append({"role": "user", field: [answer(message)]})
        answering = role == "tool"
    return out


def scrub(text: Any, key: str, limit: int = 500) -> str:
    """Return provider text as a short string without ``key`` or any other credential."""
    return provider.scrub(text, key, limit=limit)


def primed(
    events: Iterator[tuple[str, Any]], close: Callable[[], None]
) -> tuple[Iterator[tuple[str, Any]], Callable[[], None]]:
    """Read the first event now (so a failing request fails here, where it is retried)."""
    try:
        first = next(events)
    except StopIteration:
        close()
        return iter(()), close
    except BaseException:
        close()
        raise

    def chained() -> Iterator[tuple[str, Any]]:
        yield first
        yield from events

    return chained(), close


class ProviderAI(AI):
    """An :class:`AI` adapter over a provider SDK: settings, error mapping, streams.

    A subclass sets ``default_base_url``, builds its SDK client in :meth:`_connect`, lists
    what its calls raise in ``failures`` and reads its provider's error body in
    :meth:`_body`.
    """

    #: The base URL when the option is empty (``""``: the option is required).
    default_base_url: ClassVar[str] = ""
    #: What a call may raise: the SDK's errors, the HTTP client's, the guard's refusal.
    failures: ClassVar[tuple[type[BaseException], ...]] = ()

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(model=settings.model, timeout=settings.timeout, **kwargs)
        self._key = settings.api_key
        self._client: Any = self._connect(settings)

    def _connect(self, settings: Settings) -> Any:
        """Return the SDK client, sending through the guarded HTTP client (nothing dials)."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the SDK client (and with it the guarded HTTP client it was given)."""
        self._client.close()

    @classmethod
    def open(cls, ctx: OpenContext) -> Any:
        return cls(settings_of(ctx, default_base_url=cls.default_base_url), instance=ctx.instance)

    def _body(self, exc: BaseException) -> tuple[Any, Any]:
        """Return ``(error type, message)`` from the provider's error body in ``exc``."""
        return "", ""

    def _error(self, exc: BaseException) -> BaseException:
        """Map a call's failure to :class:`AIProviderError` (key scrubbed), else keep it."""
        kind, message = self._body(exc)
        failure = provider.failure_of(
            exc, secrets=(self._key,), message=message, retry_statuses=_RETRY
        )
        if failure is None:
            return exc
        if failure.kind is provider.Kind.BLOCKED:
            return blocked(self.instance)
        if failure.status is None:
            return AIProviderError(
                self.instance,
                self.adapter_name,
                status=None,
                kind=failure.kind.value,
                retryable=True,
            )
        return AIProviderError(
            self.instance,
            self.adapter_name,
            status=failure.status,
            kind=str(kind or "error"),
            retryable=failure.retryable,
            detail=failure.message,
            retry_after=failure.retry_after,
        )

    def _guarded(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run one SDK call; its failures come out as the battery's errors."""
        try:
            return call(*args, **kwargs)
        except self.failures as exc:
            raise self._error(exc) from None

    def _stream_of(
        self,
        events: Callable[[Any], Iterator[tuple[str, Any]]],
        call: Callable[..., Any],
        **kw: Any,
    ) -> tuple[Iterator[tuple[str, Any]], Callable[[], None]]:
        """Open a stream with ``call(**kw)`` and read its first event (failures mapped)."""
        stream = self._guarded(call, **kw)
        try:
            return primed(self._mapped(events(stream)), stream.close)
        except self.failures as exc:
            raise self._error(exc) from None

    def _mapped(self, events: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
        """Yield ``events``, turning a failure while reading into the battery's error."""
        try:
            yield from events
        except self.failures as exc:
            raise self._error(exc) from None

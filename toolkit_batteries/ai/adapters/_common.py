"""What the four adapters share at open: checked options, the guarded HTTP clients.

Imported by the adapter modules only (it imports httpx and the outbound transports).
Every client is built on :class:`~toolkit_batteries.core.outbound.httpx_transport.
GuardedTransport` with ``follow_redirects=False`` and ``trust_env=False``: https only
unless ``allow_insecure``, and every address the host resolves to is checked when
connecting unless ``allow_private`` (the socket connects to a checked address).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.core.outbound import check_url

from ..base import seconds

try:
    import httpx

    from toolkit_batteries.core.outbound.httpx_transport import GuardedTransport
except ImportError:  # pragma: no cover - the ai extra is part of dev installs
    raise MissingExtraError("ai", "llm_a/llm_b/llm_c/llm_d", "ai", "httpx") from None

__all__ = ["Settings", "blocked", "guarded_client", "primed", "scrub", "settings_of"]

_BLOCKED = (
    "resolves to a private, loopback or link-local address; loopback, private or "
    "link-local targets need allow_private"
)


@dataclass(frozen=True, slots=True)
class Settings:
    """The options an adapter's client is built from (``api_key`` never shown)."""

    api_key: str
    base_url: str
    model: str
    timeout: float
    allow_insecure: bool
    allow_private: bool
    skip_verify: bool
    instance: str

    def __repr__(self) -> str:
        return f"<ai settings {self.instance} model={self.model!r}>"


def settings_of(ctx: OpenContext, *, default_base_url: str) -> Settings:
    """Check the options of ``ctx`` (key present, URL allowed) and log the relaxations."""
    options, instance = ctx.options, ctx.instance
    if not options.api_key:
        raise InvalidOptionsError(
            "ai", "api_key", f"is required by the {ctx.adapter} adapter", instance=instance
        )
    allow_insecure, allow_private = bool(options.allow_insecure), bool(options.allow_private)
    base_url = (options.base_url or "").strip() or default_base_url
    if not base_url:
        raise InvalidOptionsError(
            "ai", "base_url", f"is required by the {ctx.adapter} adapter", instance=instance
        )
    base_url = check_url(
        base_url,
        service="ai",
        field="base_url",
        instance=instance,
        allow_insecure=allow_insecure,
        allow_private=allow_private,
    )
    if allow_private:
        ctx.logger.warning(
            "ai.%s: allow_private is on: private, loopback and link-local addresses may be dialed",
            instance,
        )
    if allow_insecure:
        ctx.logger.warning("ai.%s: allow_insecure is on: plain http is allowed", instance)
    if options.insecure_skip_verify:
        ctx.logger.warning(
            "ai.%s: insecure_skip_verify is on: TLS certificates are NOT verified", instance
        )
    return Settings(
        api_key=options.api_key,
        base_url=base_url.rstrip("/"),
        model=(options.model or "").strip(),
        timeout=seconds(options.timeout),
        allow_insecure=allow_insecure,
        allow_private=allow_private,
        skip_verify=bool(options.insecure_skip_verify),
        instance=instance,
    )


def transport(settings: Settings) -> GuardedTransport:
    """Return the guarded transport (no certificate check with ``insecure_skip_verify``)."""
    context = None
    if settings.skip_verify:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return GuardedTransport(
        allow_private=settings.allow_private,
        allow_insecure=settings.allow_insecure,
        ssl_context=context,
        max_connections=20,
    )


def guarded_client(settings: Settings) -> httpx.Client:
    """Return an ``httpx.Client`` on the guarded transport (no redirects, no env proxy)."""
    return httpx.Client(
        transport=transport(settings),
        timeout=settings.timeout,
        follow_redirects=False,
        trust_env=False,
    )


def blocked(instance: str) -> InvalidOptionsError:
    """Return the error of a call the outbound rules refused."""
    return InvalidOptionsError("ai", "base_url", _BLOCKED, instance=instance)


def scrub(text: Any, key: str, limit: int = 500) -> str:
    """Return provider text as a short string without ``key`` or any other credential.

    A provider's error may echo the request's credentials, or someone else's (a proxy's
    ``Authorization`` header, a URL with a password): the shared redactor masks those.
    """
    from toolkit_batteries.core.redaction import redact_string

    out = str(text or "")
    if key:
        out = out.replace(key, "[redacted]")
    return redact_string(out)[:limit]


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

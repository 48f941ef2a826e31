"""The ``cdn_a`` adapter (``cloudflare``): Cloudflare's cache-purge API, through its SDK.

A purge is ``POST <base_url>/zones/<zone_id>/purge_cache`` with ``{"files": [...]}`` (by
URL) or ``{"tags": [...]}`` (by cache tag) and ``Authorization: Bearer <api_token>``, sent
by the official ``cloudflare`` SDK (``client.cache.purge``), which builds the request, parses
the ``{"success", "errors", "messages", "result"}`` envelope and retries 408, 409, 429
and 5xx answers twice with backoff. At most :data:`MAX_PER_REQUEST` items go in one
request (the lowest plan's limit); longer lists are sent in several. ``ping()`` calls
``GET /user/tokens/verify``, which any valid token may call.

**Outbound rules.** The SDK's HTTP client is the provider base's guarded ``httpx.Client``
(:mod:`toolkit_batteries.core.outbound.provider`: no redirects, no environment proxy):
``base_url`` (default ``https://api.cloudflare.com/client/v4``) is https only unless
``allow_insecure`` and public only unless ``allow_private``, checked at open and again on
every resolved address at connection time. The configured token is the only credential:
the SDK's fallbacks to ``CLOUDFLARE_API_KEY`` / ``CLOUDFLARE_EMAIL`` /
``CLOUDFLARE_API_USER_SERVICE_KEY`` from the environment are switched off, so a stray
variable cannot change who purges.

Errors name the instance, the HTTP status or the error's class; never the token, the
zone, a URL or the provider's message text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Self

from toolkit_batteries.core.adapter import ClosedResource, OpenContext
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import provider
from toolkit_batteries.core.tracing import traced

from ..base import CDN, ZONE_ID, CDNPurgeError
from ..options import CDNOptions

with MissingExtraError.guard("cdn", "cdn_a", "cdn", "cloudflare"):
    import cloudflare

__all__ = ["DEFAULT_BASE_URL", "MAX_PER_REQUEST", "TIMEOUT", "CloudflareCDN", "check_zone_id"]

logger = logging.getLogger("toolkit.cdn")

#: Cloudflare's API root (``base_url`` unset).
DEFAULT_BASE_URL = "https://api.cloudflare.com/client/v4"
#: Most URLs or tags sent in one purge request.
MAX_PER_REQUEST = 30
#: Seconds before one request gives up.
TIMEOUT = 30.0


def check_zone_id(zone_id: str, instance: str = "default") -> str:
    """Return the zone id, or raise ``InvalidOptionsError`` (missing or not alphanumeric)."""
    text = provider.required(
        zone_id, service="cdn", field="zone_id", adapter="cdn_a", instance=instance
    )
    if not ZONE_ID.fullmatch(text):
        raise InvalidOptionsError(
            "cdn", "zone_id", "must be 1 to 64 letters or digits", instance=instance
        )
    return text


@traced("_purge_urls", "_purge_tags", "ping")
class CloudflareCDN(CDN):
    """Purges through the Cloudflare SDK's ``cache.purge`` on the provider base's client."""

    adapter_name = "cdn_a"

    def __init__(self, options: CDNOptions, *, instance: str = "default") -> None:
        """Check the options and build the client; nothing connects until the first call."""
        self.instance = instance
        token = provider.required(
            options.api_token, service="cdn", field="api_token", adapter="cdn_a", instance=instance
        )
        self._zone_id = check_zone_id(options.zone_id, instance)
        self._endpoint = provider.endpoint(
            options, service="cdn", default=DEFAULT_BASE_URL, instance=instance, field="base_url"
        )
        provider.warn_relaxed(logger, self._endpoint)
        self._http = provider.httpx_client(self._endpoint, timeout=TIMEOUT)
        self._client = cloudflare.Cloudflare(
            api_token=token, base_url=self._endpoint.url, http_client=self._http, timeout=TIMEOUT
        )
        # The token is the only credential (the SDK would add these from the environment,
        # and send them instead of the token).
        self._client.api_key = self._client.api_email = self._client.user_service_key = None

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        return cls(ctx.options, instance=ctx.instance)

    def __repr__(self) -> str:
        return f"<CloudflareCDN instance={self.instance!r} adapter='cdn_a'>"

    # ------------------------------------------------------------------ operations

    def _purge_urls(self, urls: list[str]) -> None:
        self._in_chunks(
            urls, lambda chunk: self._client.cache.purge(zone_id=self._zone_id, files=chunk)
        )

    def _purge_tags(self, tags: list[str]) -> None:
        self._in_chunks(
            tags, lambda chunk: self._client.cache.purge(zone_id=self._zone_id, tags=chunk)
        )

    def ping(self) -> None:
        """Verify the token (``GET /user/tokens/verify``); raise ``ServiceUnavailableError``."""
        try:
            self._call(self._client.user.tokens.verify)
        except CDNPurgeError as exc:
            raise ServiceUnavailableError("cdn", exc.reason, instance=self.instance) from None

    def close(self) -> None:
        """Close the HTTP client (its connection pool)."""
        http = self._http
        self._client = ClosedResource("cdn", self.instance)  # type: ignore[assignment]
        http.close()

    # ------------------------------------------------------------------ plumbing

    def _in_chunks(self, items: list[str], send: Callable[[list[str]], Any]) -> None:
        done = 0
        for start in range(0, len(items), MAX_PER_REQUEST):
            chunk = items[start : start + MAX_PER_REQUEST]
            try:
                self._call(lambda chunk=chunk: send(chunk))
            except CDNPurgeError as exc:
                raise CDNPurgeError(self.instance, exc.reason, purged=done) from None
            done += len(chunk)

    def _call(self, method: Callable[[], Any]) -> Any:
        """Run one SDK call; map its errors (the base's reading) to the battery's, textless."""
        try:
            return method()
        except cloudflare.APIError as exc:
            failure = provider.failure_of(exc)
            if failure is not None and failure.kind is provider.Kind.BLOCKED:
                raise provider.blocked_error(self._endpoint) from None
            if failure is not None and failure.status is not None:
                raise CDNPurgeError(self.instance, f"HTTP {failure.status}") from None
            # A transport failure, or a 2xx answer the SDK could not read: its class.
            raise CDNPurgeError(self.instance, type(exc).__name__) from None

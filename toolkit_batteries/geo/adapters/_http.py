"""What Google's and Nominatim's adapters share: a bounded JSON GET on the provider base.

The URL rules, the guarded transport, the warnings for a lifted rule and the reading of a
failure are the provider base's (:mod:`toolkit_batteries.core.outbound.provider`: https
only unless ``allow_insecure``; every resolved address public unless ``allow_private``;
no redirects, no environment proxy). Requests go straight to the transport: they do not
pass through
``httpx.Client``, whose INFO log line ``HTTP Request: GET <url>`` would write the full URL,
and with it a key carried in the query string (Google's), to the application's logs.
For the same reason no error raised here contains the URL, the query or a key: errors
name the service, the instance and the option to look at.

Bodies are read up to ``max_response_body`` bytes (after content decoding, so a
compressed bomb is bounded too) and must be JSON.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import provider

from ..base import GeoProviderError
from ..options import GeoOptions

with MissingExtraError.guard("geo", "geo_a", "geo", "httpx"):
    import httpx

__all__ = ["BLOCKED", "DEFAULT_MAX_BODY", "DEFAULT_TIMEOUT", "HttpTarget", "coordinate"]

logger = logging.getLogger("toolkit.geo")

#: Seconds a request may take when ``timeout`` is 0.
DEFAULT_TIMEOUT = 10.0
#: Bytes of a response body read when ``max_response_body`` is 0.
DEFAULT_MAX_BODY = 2 * 1024 * 1024


def coordinate(value: float) -> str:
    """Return a degree value as fixed-point text (7 decimals, about 1 cm; no exponent)."""
    text = f"{value:.7f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


#: Why a call the guard refused at connect time failed (names no address).
BLOCKED = (
    "resolves to a private, loopback or link-local address (or is plain http); set "
    "allow_private (allow_insecure) to call it"
)


class HttpTarget:
    """One provider's base URL, reached through a guarded transport with bounds."""

    def __init__(
        self,
        base: str,
        *,
        field: str,
        options: GeoOptions,
        instance: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        """``field`` is the option that holds ``base`` (named by errors, never its value)."""
        self._endpoint = provider.endpoint(
            options, service="geo", default="", instance=instance, field=field, url=base
        )
        self.base = self._endpoint.url
        self.field = field
        self.instance = instance
        timeout = options.timeout.total_seconds()
        if timeout < 0:
            raise InvalidOptionsError("geo", "timeout", "must not be negative", instance=instance)
        self.timeout = timeout or DEFAULT_TIMEOUT
        max_body = int(options.max_response_body)
        if max_body < 0:
            raise InvalidOptionsError(
                "geo", "max_response_body", "must not be negative", instance=instance
            )
        self.max_body = max_body or DEFAULT_MAX_BODY
        self.headers = {"Accept": "application/json", "Accept-Encoding": "gzip, deflate"}
        self.headers.update(headers or {})
        self._extensions = {
            "timeout": dict.fromkeys(("connect", "read", "write", "pool"), self.timeout)
        }
        self._transport = provider.httpx_transport(self._endpoint)
        provider.warn_relaxed(logger, self._endpoint)

    def get_json(self, path: str, params: dict[str, str]) -> tuple[int, Any]:
        """GET ``base + path`` with ``params``; return ``(status, decoded JSON body)``."""
        request = httpx.Request(
            "GET",
            self.base + path,
            params=params,
            headers=self.headers,
            extensions=self._extensions,
        )
        try:
            response = self._transport.handle_request(request)
            try:
                body = self._read(response)
            finally:
                response.close()
        except (GeoProviderError, InvalidOptionsError):
            raise
        except Exception as exc:
            failure = provider.failure_of(exc)
            kind = failure.kind if failure is not None else None
            if kind is provider.Kind.BLOCKED:
                raise provider.blocked_error(self._endpoint, BLOCKED) from None
            if kind is provider.Kind.TIMEOUT:
                raise self._unavailable("the provider did not answer in time") from None
            if kind is not None:  # a lost connection, a body its encoding does not decode
                raise self._unavailable("the provider could not be reached") from None
            raise
        if not body:
            return response.status_code, None
        try:
            return response.status_code, json.loads(body)
        except ValueError:
            if response.status_code != 200:  # an error page: the status says enough
                return response.status_code, None
            raise self._unavailable(
                f"the provider answered HTTP {response.status_code} with a body that is not JSON"
            ) from None

    def _read(self, response: httpx.Response) -> bytes:
        return provider.read_bounded(
            response.iter_bytes(), self.max_body, too_large=self._too_large
        )

    def _too_large(self) -> GeoProviderError:
        return GeoProviderError(
            f"the provider's answer is larger than max_response_body ({self.max_body} bytes)",
            instance=self.instance,
        )

    def _unavailable(self, reason: str) -> ServiceUnavailableError:
        return ServiceUnavailableError("geo", reason, instance=self.instance)

    def close(self) -> None:
        """Close the transport's connection pool."""
        self._transport.close()

"""The ``geo_b`` adapter (``nominatim``, ``osm``): OpenStreetMap's Nominatim, within its policy.

Wire format (the public API reference):

* geocode: ``GET {endpoint}/search?q=<query>&format=jsonv2&addressdetails=1&limit=10``
  answers a JSON list of ``{"place_id", "osm_type", "osm_id", "lat": "52.5", "lon":
  "13.4", "category", "type", "addresstype", "name", "display_name", "address": {...}}``
  (coordinates are strings);
* reverse: ``GET {endpoint}/reverse?lat=<lat>&lon=<lon>&format=jsonv2&addressdetails=1``
  answers one such object, or HTTP 200 ``{"error": "Unable to geocode"}`` for a point
  with nothing there (``None``);
* HTTP 429 raises :class:`GeoRateLimitedError`, 403 (a blocked client) and other 4xx
  :class:`GeoProviderError`, 5xx ``ServiceUnavailableError``.

**Usage policy.** The public instance asks for an application-specific ``User-Agent`` and
at most one request per second. ``user_agent`` is required (a blank one, one with control
characters, or an HTTP library's default is refused at open) and sent on every request.
The one request per second is a token bucket of the ratelimit battery (rate 1, burst 1)
keyed by the endpoint's host and port, so every geo instance, thread and container that
calls the same host shares it. Its store is the one of the ratelimit instance named like
this geo instance, else of ``ratelimit.default``: on ``kvserver`` the budget is shared
by every process that uses that server (the server's clock decides); on ``memory`` it is
shared within the process. A call waits for its turn up to ``timeout`` (default 10 s)
and then raises :class:`GeoRateLimitedError`; an unreachable limiter server raises
``ServiceUnavailableError`` (the budget fails closed: the policy is not ours to break).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from types import MappingProxyType
from typing import Any, Self
from urllib.parse import urlsplit

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.tracing import traced
from toolkit_batteries.ratelimit.base import Limits, RateLimiter

from ..base import Geo, GeoProviderError, GeoRateLimitedError, Place, check_user_agent
from ..options import GeoOptions
from ._http import HttpTarget, coordinate

__all__ = [
    "DEFAULT_ENDPOINT",
    "RATE",
    "NominatimGeo",
    "RequestBudget",
    "budget_limiter",
    "check_user_agent",
    "place_of",
]

#: The public instance, used when ``endpoint`` is empty.
DEFAULT_ENDPOINT = "https://nominatim.openstreetmap.org"
#: Requests per second the usage policy allows (bucket rate; the burst is 1).
RATE = 1.0
#: Results asked of ``/search``.
SEARCH_LIMIT = "10"
#: Clock and sleep of the budget's waits (module attributes so tests can swap time).
_clock: Callable[[], float] = time.monotonic
_sleep: Callable[[float], None] = time.sleep

_process_lock = threading.Lock()
_process_limiters: dict[Callable[[], float], RateLimiter] = {}


def place_of(item: Mapping[str, Any]) -> Place:
    """Return the :class:`Place` of one jsonv2 object; raise ``ValueError`` if malformed."""
    address = item.get("address") or {}
    if not isinstance(address, Mapping):
        raise ValueError("address is not an object")
    osm_type, osm_id = item.get("osm_type"), item.get("osm_id")
    ident = f"{osm_type}/{osm_id}" if osm_type and osm_id is not None else ""
    return Place(
        lat=float(item["lat"]),
        lon=float(item["lon"]),
        address=str(item.get("display_name") or ""),
        name=str(item.get("name") or ""),
        country_code=str(address.get("country_code") or "").upper(),
        kind=str(item.get("addresstype") or item.get("type") or ""),
        components=MappingProxyType({str(k): str(v) for k, v in address.items()}),
        provider_id=ident or str(item.get("place_id") or ""),
        raw=MappingProxyType(dict(item)),
    )


def budget_limiter(ctx: OpenContext, *, clock: Callable[[], float] | None = None) -> RateLimiter:
    """Return the 1-per-second limiter on the store of the ratelimit instance geo uses.

    The ratelimit instance named like this geo instance (else ``default``) is opened
    through the container first (so it closes after geo, and a ``kvserver`` store that
    does not answer fails this open); the budget is a bucket of its own limits (rate
    :data:`RATE`, burst 1) on the same store, whatever rate that instance sets.
    """
    container = ctx.container
    name = ctx.sibling_name("ratelimit")
    store = container.ratelimit(name)
    limits = Limits(RATE, 1, idle_ttl=60.0, instance=name)
    if store.adapter_name == "kvserver":
        from toolkit_batteries.ratelimit.adapters.kvserver import KVServerRateLimiter

        block = container.config.service("ratelimit", name).options.kvserver
        client = ctx.pools.kvserver("ratelimit", block, instance=name)
        return KVServerRateLimiter(client, limits, prefix=block.prefix, instance=name, clock=clock)
    from toolkit_batteries.ratelimit.adapters.memory import MemoryRateLimiter

    key = clock or time.monotonic
    with _process_lock:  # one bucket per host for the whole process (per clock, for tests)
        limiter = _process_limiters.get(key)
        if limiter is None:
            limiter = _process_limiters[key] = MemoryRateLimiter(
                limits, clock=key, instance="geo_b"
            )
        return limiter


@dataclass(frozen=True, slots=True)
class RequestBudget:
    """Wait for a token of ``key`` on ``limiter``, up to ``max_wait`` seconds."""

    limiter: RateLimiter
    key: str
    _: KW_ONLY
    max_wait: float
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    instance: str = "default"

    def take(self) -> None:
        """Return once a request may go; raise :class:`GeoRateLimitedError` after ``max_wait``."""
        deadline = self.clock() + self.max_wait
        while True:
            decision = self.limiter.allow(self.key)
            if decision.allowed:
                return
            delay = max(decision.retry_after, 0.001)
            if self.clock() + delay > deadline:
                raise GeoRateLimitedError(
                    f"the geocoder's budget ({RATE:g} request/s) did not free up within "
                    f"{self.max_wait:g} s (option timeout)",
                    instance=self.instance,
                )
            self.sleep(delay)


@traced("_geocode", "_reverse")
class NominatimGeo(Geo):
    """Geocoding through an open geocoder's ``/search`` and ``/reverse`` (``jsonv2``)."""

    adapter_name = "geo_b"

    def __init__(
        self,
        options: GeoOptions,
        limiter: RateLimiter,
        *,
        instance: str = "default",
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        """Validate the options; ``limiter`` holds the shared one-per-second budget."""
        super().__init__(instance=instance)
        agent = check_user_agent(options.user_agent, instance)
        self._http = HttpTarget(
            options.endpoint or DEFAULT_ENDPOINT,
            field="endpoint",
            options=options,
            instance=instance,
            headers={"User-Agent": agent},
        )
        parts = urlsplit(self._http.base)
        host = f"{(parts.hostname or '').lower()}:{parts.port or 443}"
        self.budget = RequestBudget(
            limiter,
            f"geo_b:{host}",
            max_wait=self._http.timeout,
            clock=clock or _clock,
            sleep=sleep or _sleep,
            instance=instance,
        )

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Validate options first, then open the ratelimit store that holds the budget."""
        check_user_agent(ctx.options.user_agent, ctx.instance)
        clock = None if _clock is time.monotonic else _clock
        limiter = budget_limiter(ctx, clock=clock)
        return cls(ctx.options, limiter, instance=ctx.instance, clock=_clock, sleep=_sleep)

    def _get(self, path: str, params: dict[str, str]) -> Any:
        self.budget.take()
        status, body = self._http.get_json(path, params)
        if status == 429:
            raise GeoRateLimitedError(
                "the geocoder refused: too many requests", instance=self.instance
            )
        if status == 403:
            raise GeoProviderError(
                "the geocoder refused the client (HTTP 403; check user_agent and its usage policy)",
                instance=self.instance,
            )
        if status >= 500:
            raise ServiceUnavailableError(
                "geo", f"the geocoder failed (HTTP {status})", instance=self.instance
            )
        if status != 200:
            raise GeoProviderError(f"the geocoder answered HTTP {status}", instance=self.instance)
        return body

    def _malformed(self) -> GeoProviderError:
        return GeoProviderError(
            "the geocoder's answer has an unexpected shape", instance=self.instance
        )

    def _geocode(self, query: str) -> list[Place]:
        body = self._get(
            "/search",
            {"q": query, "format": "jsonv2", "addressdetails": "1", "limit": SEARCH_LIMIT},
        )
        if not isinstance(body, list):
            raise self._malformed()
        try:
            return [place_of(item) for item in body]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise self._malformed() from None

    def _reverse(self, lat: float, lon: float) -> Place | None:
        body = self._get(
            "/reverse",
            {
                "lat": coordinate(lat),
                "lon": coordinate(lon),
                "format": "jsonv2",
                "addressdetails": "1",
            },
        )
        if not isinstance(body, dict):
            raise self._malformed()
        if "error" in body and "lat" not in body:
            return None
        try:
            return place_of(body)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise self._malformed() from None

    def close(self) -> None:
        """Close the connection pool (the limiter belongs to the ratelimit battery)."""
        self._http.close()

"""The geo service: geocoding (text to places) and reverse geocoding (a point to a place).

Every adapter answers with the same :class:`Place`, so a view written against the
``static`` file in development runs unchanged on a geocoding API in production. The base
class validates the arguments once (a query is non-blank text of at most
:data:`MAX_QUERY_LENGTH` characters; a latitude is a finite number in ``[-90, 90]``, a
longitude one in ``[-180, 180]``) and leaves the adapters two primitives, ``_geocode``
and ``_reverse``, that only ever see valid input.

Errors name the service, the instance and what went wrong, never a query, a key or the
provider's URL (a geocoding API may carry its key in the query string).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError, ToolkitError

__all__ = [
    "MAX_QUERY_LENGTH",
    "Geo",
    "GeoError",
    "GeoProviderError",
    "GeoRateLimitedError",
    "Place",
    "check_point",
    "check_query",
    "check_user_agent",
]

#: Longest query accepted (characters); providers cap theirs too, and a megabyte of
#: request data should never reach a provider's URL.
MAX_QUERY_LENGTH = 1000

_EMPTY: Mapping[str, str] = MappingProxyType({})


class GeoError(ToolkitError):
    """Root of the geo battery's errors."""

    code = "geo_error"

    def __init__(self, reason: str, *, instance: str = "default") -> None:
        self.instance = instance
        self.reason = reason
        super().__init__(f"geo.{instance}: {reason}")


class GeoProviderError(GeoError):
    """The provider refused the request (bad key, denied, malformed); retrying won't help."""

    code = "geo_provider_error"


class GeoRateLimitedError(GeoError):
    """The provider's quota, or the battery's own request budget, is spent for now."""

    code = "resource_exhausted"


@dataclass(frozen=True, slots=True)
class Place:
    """One geocoding answer, the same shape on every adapter.

    ``address`` is the provider's one-line address; ``name`` the place's own name when it
    has one; ``country_code`` the ISO 3166-1 alpha-2 code in upper case (empty when
    unknown); ``kind`` the provider's type of place (``locality``, ``city``...);
    ``components`` the address parts in the provider's own vocabulary; ``provider_id``
    the provider's identifier (``place_id``, ``node/123``); ``raw`` the provider's JSON
    object (never compared or shown).
    """

    lat: float
    lon: float
    address: str
    name: str = ""
    country_code: str = ""
    kind: str = ""
    components: Mapping[str, str] = field(default_factory=lambda: _EMPTY, hash=False)
    provider_id: str = ""
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False, hash=False)


def check_query(query: object) -> str:
    """Return ``query`` stripped, or raise ``TypeError``/``ValueError`` (never echoing it)."""
    if not isinstance(query, str):
        raise TypeError("geocode query must be a string")
    text = query.strip()
    if not text:
        raise ValueError("geocode query must not be blank")
    if len(text) > MAX_QUERY_LENGTH:
        raise ValueError(f"geocode query is longer than {MAX_QUERY_LENGTH} characters")
    return text


#: User agents of HTTP libraries: geocoder policies block them, so they are refused.
_LIBRARY_AGENTS = ("python-httpx", "python-requests", "python-urllib", "curl/", "wget/")


def check_user_agent(value: str, instance: str = "default") -> str:
    """Return the ``User-Agent`` stripped, or raise ``InvalidOptionsError`` (never echoing it)."""

    def invalid(reason: str) -> InvalidOptionsError:
        return InvalidOptionsError("geo", "user_agent", reason, instance=instance)

    text = (value or "").strip()
    if not text:
        raise invalid(
            "is required by the geo_b adapter (the geocoder's usage policy asks for an "
            'application-specific User-Agent, e.g. "myapp/1.0 (ops@example.com)")'
        )
    if len(text) > 512 or not all(" " <= c <= "~" for c in text):
        raise invalid("must be printable ASCII text of at most 512 characters")
    if text.lower().startswith(_LIBRARY_AGENTS):
        raise invalid("must name your application, not an HTTP library")
    return text


def _coordinate(value: object, name: str, bound: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number")
    number = float(value)
    if not math.isfinite(number) or not -bound <= number <= bound:
        raise ValueError(f"{name} must be between -{bound:g} and {bound:g}")
    return number


def check_point(lat: object, lon: object) -> tuple[float, float]:
    """Return ``(lat, lon)`` as floats, or raise for a non-number or an out-of-range value."""
    return _coordinate(lat, "latitude", 90.0), _coordinate(lon, "longitude", 180.0)


class Geo(Service):
    """Geocoding and reverse geocoding; adapters implement ``_geocode`` and ``_reverse``."""

    service_name: ClassVar[str] = "geo"

    def __init__(self, *, instance: str = "default") -> None:
        self.instance = instance

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.adapter_name} geo.{self.instance}>"

    def geocode(self, query: str) -> list[Place]:
        """Return the places matching ``query``, best first (an empty list when none)."""
        return self._geocode(check_query(query))

    def reverse(self, lat: float, lon: float) -> Place | None:
        """Return the place at (``lat``, ``lon``), or ``None`` when there is none."""
        return self._reverse(*check_point(lat, lon))

    def _geocode(self, query: str) -> list[Place]:
        raise NotImplementedError

    def _reverse(self, lat: float, lon: float) -> Place | None:
        raise NotImplementedError

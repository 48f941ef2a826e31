"""The ``remote`` adapter: catalogs fetched from a translation service over HTTP(S).

Wire format (JSON over HTTP, one catalog per locale):

* ``GET {endpoint}/catalogs/{locale}`` (the locale normalized, ``pt_BR``) with
  ``Accept: application/json`` and, when ``remote.api_key`` is set,
  ``Authorization: Bearer <api_key>``. ``200`` answers
  ``{"locale": "fr", "plural_forms": "nplurals=2; plural=(n > 1);",
  "messages": {"greeting": "Bonjour", "apple": ["%(count)s pomme", "%(count)s pommes"]}}``
  (a string, or a list of plural forms in the order the gettext rule numbers them);
  ``404`` means the service has no catalog for that locale (the chain moves on).
* ``GET {endpoint}/catalogs`` answers ``{"locales": [...]}``; :meth:`RemoteI18n.ping`
  uses it.

A locale's catalog is fetched on its first lookup, once however many threads ask
(the others wait for it), and kept until :meth:`RemoteI18n.reload`. At most
``remote.max_in_flight`` fetches run at once in the process's instance; a fetch waits at
most ``remote.timeout`` for a slot and then at most ``remote.timeout`` for each network
phase. A failed fetch (timeout, connection refused, another status, bad JSON) raises
:class:`~toolkit_batteries.core.errors.ServiceUnavailableError` and is not cached: an
outage is never mistaken for a missing key. Bodies over :data:`MAX_CATALOG_BYTES` are
refused.

Outbound calls go through the provider base's guarded client
(:mod:`toolkit_batteries.core.outbound.provider`): https only unless
``remote.allow_insecure``, never a loopback, private or link-local address (judged on the
resolved addresses at connect time) unless ``remote.allow_private``; redirects and
environment proxies are not followed. The API key never appears in a repr, a log line or
an error.

The wire format is the toolkit's own (any translation service can serve it), not one
product's API, so the adapter keeps its neutral name.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any
from urllib.parse import quote

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    MissingExtraError,
    ServiceUnavailableError,
)
from toolkit_batteries.core.outbound import OutboundBlockedError, provider
from toolkit_batteries.core.tracing import traced

from ..base import Catalog, I18n, plural_rule

with MissingExtraError.guard("i18n", "remote", "i18n", "httpx"):
    import httpx

__all__ = ["MAX_CATALOG_BYTES", "RemoteI18n", "endpoint_of"]

logger = logging.getLogger("toolkit.i18n")

#: Largest catalog answer read.
MAX_CATALOG_BYTES = 8 * 1024 * 1024
_ABSENT = object()


def endpoint_of(options: Any, instance: str) -> provider.Endpoint:
    """Check ``remote.endpoint`` (``options`` is the ``remote`` group) against the rules.

    The provider base names the nested relaxations (``remote.allow_insecure``,
    ``remote.allow_private``) in its messages, warnings and blocked-address error.
    """
    if not options.endpoint:
        raise InvalidOptionsError("i18n", "remote.endpoint", "is required", instance=instance)
    return provider.endpoint(
        options, service="i18n", default="", instance=instance, field="remote.endpoint"
    )


def _parse(locale: str, body: bytes) -> Catalog:
    data = json.loads(body)
    if not isinstance(data, dict) or not isinstance(data.get("messages", {}), dict):
        raise ValueError("not a catalog")
    messages: dict[str, str | tuple[str, ...]] = {}
    for key, value in (data.get("messages") or {}).items():
        if isinstance(value, str):
            messages[str(key)] = value
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            messages[str(key)] = tuple(value)
        else:
            raise ValueError("a message is neither a string nor a list of strings")
    return Catalog(locale, messages, plural_rule(str(data.get("plural_forms") or "")))


@traced("_fetch")
class RemoteI18n(I18n):
    """Catalogs fetched per locale from a translation service (see the module docstring)."""

    adapter_name = "remote"

    def __init__(
        self,
        *,
        endpoint: provider.Endpoint,
        api_key: str = "",
        timeout: float = 30.0,
        max_in_flight: int = 1000,
        fallback: str = "",
        instance: str = "default",
    ) -> None:
        super().__init__(fallback=fallback, instance=instance)
        self._target = endpoint
        self._endpoint = endpoint.url
        self.timeout = timeout
        self.max_in_flight = max_in_flight
        self._slots = threading.BoundedSemaphore(max_in_flight)
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = provider.httpx_client(
            endpoint, timeout=timeout, max_connections=min(max_in_flight, 100), headers=headers
        )
        self._catalogs: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @classmethod
    def open(cls, ctx: OpenContext) -> RemoteI18n:
        options = ctx.options.remote
        endpoint = endpoint_of(options, ctx.instance)
        rules = {"service": "i18n", "instance": ctx.instance}
        timeout = provider.positive(options.timeout, field="remote.timeout", **rules)
        provider.positive(int(options.max_in_flight), field="remote.max_in_flight", **rules)
        provider.warn_relaxed(ctx.logger, endpoint)
        return cls(
            endpoint=endpoint,
            api_key=str(options.api_key or ""),
            timeout=timeout,
            max_in_flight=int(options.max_in_flight),
            instance=ctx.instance,
        )

    def __repr__(self) -> str:
        return f"<RemoteI18n i18n.{self.instance}>"

    def close(self) -> None:
        self._client.close()

    # -- fetching ------------------------------------------------------------------
    def _get(self, path: str) -> tuple[int, bytes]:
        if not self._slots.acquire(timeout=self.timeout):
            raise ServiceUnavailableError(
                "i18n", "no fetch slot within remote.timeout", instance=self.instance
            )
        try:
            with self._client.stream("GET", self._endpoint + path) as response:
                body = provider.read_bounded(
                    response.iter_bytes(), MAX_CATALOG_BYTES, too_large=self._too_large
                )
                return response.status_code, body
        except (OutboundBlockedError, httpx.HTTPError) as exc:
            failure = provider.failure_of(exc)
            if failure is not None and failure.kind is provider.Kind.BLOCKED:
                raise provider.blocked_error(self._target) from None
            if failure is not None and failure.kind is provider.Kind.TIMEOUT:
                raise ServiceUnavailableError(
                    "i18n", "the request timed out (remote.timeout)", instance=self.instance
                ) from None
            raise ServiceUnavailableError(
                "i18n", f"request failed ({type(exc).__name__})", instance=self.instance
            ) from None
        finally:
            self._slots.release()

    def _too_large(self) -> ServiceUnavailableError:
        return ServiceUnavailableError(
            "i18n", "the catalog answer is too large", instance=self.instance
        )

    def _fetch(self, locale: str) -> Catalog | None:
        status, body = self._get(f"/catalogs/{quote(locale, safe='')}")
        if status == 404:
            return None
        if status != 200:
            raise ServiceUnavailableError(
                "i18n", f"the service answered HTTP {status}", instance=self.instance
            )
        try:
            return _parse(locale, body)
        except (ValueError, TypeError):
            raise ServiceUnavailableError(
                "i18n", "the service answered a malformed catalog", instance=self.instance
            ) from None

    def _catalog(self, locale: str) -> Catalog | None:
        found = self._catalogs.get(locale, _ABSENT)
        if found is not _ABSENT:
            return found  # type: ignore[no-any-return]
        with self._guard:
            lock = self._locks.setdefault(locale, threading.Lock())
        with lock:
            found = self._catalogs.get(locale, _ABSENT)
            if found is _ABSENT:
                found = self._fetch(locale)
                self._catalogs[locale] = found
        return found  # type: ignore[no-any-return]

    def prefetch(self, *locales: str) -> None:
        """Fetch the catalogs of ``locales`` now (e.g. at startup) instead of on first use."""
        for locale in locales:
            for name in self.chain(locale):
                self._catalog(name)

    def reload(self) -> None:
        """Forget every fetched catalog; the next lookup of each locale fetches again."""
        self._catalogs = {}

    def locales(self) -> list[str]:
        return sorted(name for name, catalog in self._catalogs.items() if catalog is not None)

    def ping(self) -> None:
        """Raise :class:`ServiceUnavailableError` unless ``GET /catalogs`` answers 200."""
        status, _ = self._get("/catalogs")
        if status != 200:
            raise ServiceUnavailableError(
                "i18n", f"the service answered HTTP {status}", instance=self.instance
            )

"""A strict translation service speaking the i18n ``remote`` adapter's documented format.

The wire format is the toolkit's own (``docs/batteries/i18n.md``, the adapter's module
docstring), so this server is its reference: it refuses what the documentation does not
allow, so an adapter that drifts from it fails its tests instead of passing against a
lenient fake.

* ``GET /catalogs/<locale>``: ``200 {"locale", "plural_forms", "messages"}`` or ``404``;
  ``GET /catalogs``: ``200 {"locales": [...]}``.
* Refused, with ``{"error": {"code", "message"}}``: another method (``405``, ``Allow:
  GET``); a body or a query string (``400 invalid_request``); a locale that is not
  normalized (``pt_BR``, not ``pt-br`` or ``PT_br``: ``400 invalid_locale``); no
  ``Accept`` that takes ``application/json`` (``406 not_acceptable``); an
  ``Authorization`` that is not ``Bearer <token>``, or, when the server has a key, not
  ``Bearer <key>`` (``401 unauthorized``).

Tests set :attr:`delay` (seconds each answer waits, counted in flight), :attr:`status`
(a forced status), and read :attr:`requests` (paths in order), :attr:`peak` (most
requests in flight at once) and :attr:`authorization` (the last ``Authorization``).
"""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Any
from urllib.parse import unquote

from tests.support.provider_server import Answer, ProviderServer, Received

__all__ = ["TranslationServer"]

#: A normalized locale: a lowercase language, then ``_``-separated parts (``pt_BR``).
_NORMALIZED = re.compile(r"[a-z]{2,8}(?:_[A-Za-z0-9]{1,8})*")
_PREFIX = "/catalogs/"


def _error(status: int, code: str, message: str) -> Answer:
    return status, {"error": {"code": code, "message": message}}


class TranslationServer(ProviderServer):
    """The catalogs of ``catalogs`` (``{locale: (plural_forms, messages)}``) over HTTP."""

    content_types = ()  # a GET-only API: any body is refused by :meth:`malformed`

    def __init__(self, catalogs: dict[str, tuple[str, dict[str, Any]]], key: str = "") -> None:
        """``key``: the API key every request must carry (empty: none is required)."""
        super().__init__(key)
        self.catalogs = catalogs
        #: A status every request is answered with (an outage, a server error).
        self.status: int | None = None
        self.peak = 0
        self._peak_lock = threading.Lock()

    @property
    def requests(self) -> list[str]:  # type: ignore[override]
        """The paths requested so far, in order."""
        return [record.path for record in self._records()]

    @property
    def authorization(self) -> str | None:
        """The ``Authorization`` header of the last request (``None``: it had none)."""
        records = self._records()
        return records[-1].header("authorization") if records else None

    @property
    def in_flight(self) -> int:
        """Requests received and not answered yet."""
        return sum(1 for record in self._records() if not record.status)

    def unauthorized(self) -> Answer:
        return _error(401, "unauthorized", "Authorization must be Bearer <api key>")

    def authorized(self, headers: dict[str, str]) -> bool:
        auth = headers.get("authorization")
        if auth is None:
            return not self.key
        scheme, _, token = auth.partition(" ")
        if scheme != "Bearer" or not token.strip() or token != token.strip():
            return False
        return not self.key or token == self.key

    def malformed(self, request: Received) -> Answer | None:
        # Runs once per authorized request, before the answer waits: the moment to count
        # the requests in flight (the base answers queued failures after this hook).
        with self._peak_lock:
            self.peak = max(self.peak, self.in_flight)
        if request.method != "GET":
            refused = {"error": {"code": "method_not_allowed", "message": "only GET"}}
            return 405, refused, {"Allow": "GET"}  # type: ignore[return-value]
        if request.raw:
            return _error(400, "invalid_request", "a GET carries no body")
        if request.query:
            return _error(400, "invalid_request", "no query parameters are defined")
        accept = request.header("accept") or ""
        if not any(
            kind.split(";")[0].strip() in ("application/json", "application/*", "*/*")
            for kind in accept.split(",")
        ):
            return _error(406, "not_acceptable", "the service answers application/json")
        if request.path.startswith(_PREFIX):
            locale = unquote(request.path[len(_PREFIX) :])
            if not _NORMALIZED.fullmatch(locale):
                return _error(400, "invalid_locale", "the locale must be normalized (pt_BR)")
        return None

    def answer(self, handler: Any, request: Received) -> None:
        with contextlib.suppress(OSError):  # the client gave up (a time-out test)
            handler.send_json(*self._route(request))

    def _route(self, request: Received) -> Answer:
        if self.status is not None:
            return _error(self.status, "forced", "the test forced this status")
        if request.path == "/catalogs":
            return 200, {"locales": sorted(self.catalogs)}
        if request.path.startswith(_PREFIX):
            locale = unquote(request.path[len(_PREFIX) :])
            if locale in self.catalogs:
                plural, messages = self.catalogs[locale]
                return 200, {"locale": locale, "plural_forms": plural, "messages": messages}
            return _error(404, "not_found", "no catalog for this locale")
        return _error(404, "not_found", "no such route")

"""A strict stand-in for PostHog's ``/batch/`` capture endpoint, on the provider-server base.

The tests (and ``bench/analytics.py``) start this one in a thread. It refuses what PostHog's
capture endpoint refuses:

* anything but ``POST /batch/``: 404 (405 for another method on ``/batch/``);
* a body that is not a JSON object or not ``application/json`` (gzip ``Content-Encoding``
  is taken, as the SDK sends it): 400 ``{"type": "validation_error", "code":
  "invalid_payload", "detail", "attr": null}``;
* no ``api_key``: 401 ``missing_api_key``; another key: 401 ``invalid_api_key``
  (``{"type": "authentication_error", ...}``);
* a ``batch`` that is not a non-empty list, an item without an ``event`` name or a
  ``distinct_id`` (top level or in ``properties``), a ``timestamp`` that is not ISO 8601:
  400 ``invalid_payload`` naming the item;
* a decoded body over 20 MB, or one event over 1 MB: 413 ``payload_too_large``.

A well-formed batch answers 200 ``{"status": 1}``. ``fail_next(status, count)`` answers the
next well-formed requests with that status (503 ``server_error``). Requests are recorded
(:class:`Received`, with the status answered) unless ``record=False``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from tests.support.provider_server import Answer, ProviderServer, Received

__all__ = ["BatchServer", "Received"]

#: PostHog's capture limits: a request body and one event.
MAX_BODY = 20 * 1024 * 1024
MAX_EVENT = 1024 * 1024

_ERRORS = {
    400: ("validation_error", "invalid_payload", "Malformed request data"),
    401: (
        "authentication_error",
        "invalid_api_key",
        "Project API key invalid. You can find your project API key in your project settings.",
    ),
    413: ("validation_error", "payload_too_large", "Request body is too large"),
    503: ("server_error", "server_error", "Service unavailable"),
}


def _error(status: int, detail: str = "", code: str = "") -> dict[str, Any]:
    kind, default_code, text = _ERRORS.get(status, ("server_error", "error", "Error"))
    return {"type": kind, "code": code or default_code, "detail": detail or text, "attr": None}


def _iso(value: Any) -> bool:
    try:
        datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


class BatchServer(ProviderServer):
    """Start with ``with BatchServer(api_key) as server:``; ``server.url`` is the endpoint."""

    max_body = MAX_BODY

    def __init__(self, api_key: str, *, record: bool = True) -> None:
        super().__init__(api_key)
        self.record = record

    def __enter__(self) -> BatchServer:
        self.start()
        return self

    def authorized(self, headers: dict[str, str]) -> bool:
        return True  # the key is in the body: see malformed

    def too_large(self, size: int) -> Answer:
        return 413, _error(413, f"Request body of {size} bytes is over {MAX_BODY}")

    def bad_request(self, message: str) -> Answer:
        return 400, _error(400, message)

    def malformed(self, request: Received) -> Answer | None:
        if request.path != "/batch/":
            return 404, {"detail": "Not found"}
        if request.method != "POST":
            return 405, {"detail": f'Method "{request.method}" not allowed.'}
        refusal = super().malformed(request)
        if refusal is not None:
            return refusal
        body = request.body
        if not isinstance(body, dict):
            return self.bad_request("The request body is not a JSON object")
        if not body.get("api_key"):
            return 401, _error(
                401,
                "API key not provided. You can find your project API key in your settings.",
                "missing_api_key",
            )
        if body["api_key"] != self.key:
            return 401, _error(401)
        batch = body.get("batch")
        if not isinstance(batch, list) or not batch:
            return self.bad_request("Invalid payload: batch must be a non-empty list")
        for index, item in enumerate(batch):
            refusal = self._item(index, item)
            if refusal is not None:
                return refusal
        return None

    def _item(self, index: int, item: Any) -> Answer | None:
        if not isinstance(item, dict) or not isinstance(item.get("event"), str):
            return self.bad_request(f"Invalid payload: batch item {index} needs an event")
        if not item["event"]:
            return self.bad_request(f"Invalid payload: batch item {index} needs an event")
        properties = item.get("properties") or {}
        if not (item.get("distinct_id") or properties.get("distinct_id")):
            return self.bad_request(f"Invalid payload: batch item {index} needs a distinct_id")
        if "timestamp" in item and not _iso(item["timestamp"]):
            return self.bad_request(f"Invalid payload: batch item {index} has a bad timestamp")
        size = len(json.dumps(item).encode())
        if size > MAX_EVENT:
            return 413, _error(413, f"Event {index} of {size} bytes is over {MAX_EVENT}")
        return None

    def answer(self, handler: Any, request: Received) -> None:
        handler.send_json(200, {"status": 1})

    # ------------------------------------------------------------------ test helpers

    def fail_next(self, status: int, count: int = 1) -> None:
        """Answer the next ``count`` well-formed requests with ``status``."""
        with self._lock:
            self.failures.extend([(status, _error(status))] * count)

    @property
    def requests(self) -> list[Received]:  # type: ignore[override]
        """Every request recorded so far, in arrival order."""
        return self._records()

    def events(self) -> list[dict[str, Any]]:
        """Every batch item of the requests answered 200, in arrival order."""
        items: list[dict[str, Any]] = []
        for request in self.requests:
            if request.status == 200:
                items.extend(request.body["batch"])
        return items

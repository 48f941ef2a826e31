"""Strict stand-ins for the two payment providers, on the shared provider-server base.

``ProviderA`` answers like Stripe's PaymentIntents/Refunds API and refuses what Stripe
refuses: a key not sent as ``Authorization: Bearer sk_...`` (401), a missing or undated
``Stripe-Version``, a POST body that is not form-encoded, a missing required parameter
(``parameter_missing``), an unknown one (``parameter_unknown``), a non-integer amount
(``parameter_invalid_integer``), an ``Idempotency-Key`` over 255 characters, and **the same
``Idempotency-Key`` with other parameters or on another endpoint** (400
``idempotency_error``); a replay with the same parameters answers the first answer again
with ``Idempotent-Replayed: true``. Errors are ``{"error": {"type", "code", "message",
"param"}}``.

``ProviderB`` answers like Paddle Billing's transactions/adjustments API: ``Authorization:
Bearer`` (missing: 401 ``authentication_missing``, not a bearer: 401
``authentication_malformed``, another key: 403 ``forbidden``), ``Paddle-Version: 1``, JSON
object bodies (``invalid_json``), required fields (400 ``invalid_field`` with ``errors``),
``{"data": ..., "meta": {"request_id"}}`` answers and ``{"error": {"type", "code",
"detail", "documentation_url"}}`` error bodies.

Both record every request (:attr:`ProviderServer.received`, aliased :attr:`Provider.seen`).
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Callable
from typing import Any

from tests.support.provider_server import Answer, ProviderServer, Received

#: The Received record of a request (the name the payment tests use).
Seen = Received

_DATED = re.compile(r"\d{4}-\d{2}-\d{2}(\.[a-z]+)?")


class Provider(ProviderServer):
    """A payment provider stand-in; :meth:`route` answers a well-formed, authorized request."""

    #: Called with each new refund object before the provider answers the refund request,
    #: as a provider's webhook may reach the merchant before the API answer does.
    on_refund: Callable[[dict[str, Any]], None] | None = None

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self._route_lock = threading.Lock()

    @property
    def seen(self) -> list[Received]:
        return self._records()

    def start(self) -> Provider:
        super().start()
        return self

    def route(self, seen: Received) -> Answer:
        raise NotImplementedError

    def answer(self, handler: Any, request: Received) -> None:
        with self._route_lock:  # one request at a time changes the provider's objects
            handler.send_json(*self.route(request))


# ---------------------------------------------------------------------- Stripe


def _stripe_error(
    status: int, kind: str, message: str, code: str = "", param: str = ""
) -> tuple[int, Any]:
    body: dict[str, Any] = {"type": kind, "message": message}
    if code:
        body["code"] = code
    if param:
        body["param"] = param
    return status, {"error": body}


#: Parameters each endpoint takes (a ``metadata[...]`` key is always taken where
#: ``metadata`` is); anything else is Stripe's ``parameter_unknown``.
_STRIPE_PARAMS: dict[str, frozenset[str]] = {
    "create": frozenset(
        [
            "amount",
            "currency",
            "capture_method",
            "metadata",
            "description",
            "customer",
            "confirm",
            "payment_method",
            "payment_method_types",
            "receipt_email",
            "statement_descriptor",
            "statement_descriptor_suffix",
            "setup_future_usage",
            "automatic_payment_methods",
            "return_url",
            "expand",
        ]
    ),
    "capture": frozenset({"amount_to_capture", "metadata", "expand", "final_capture"}),
    "cancel": frozenset({"cancellation_reason", "expand"}),
    "refund": frozenset(
        {"payment_intent", "charge", "amount", "reason", "metadata", "expand", "instructions_email"}
    ),
}
_REQUIRED = {"create": ("amount", "currency")}
_CAPTURE_METHODS = {"automatic", "automatic_async", "manual"}
_REFUND_REASONS = {"duplicate", "fraudulent", "requested_by_customer"}


class ProviderA(Provider):
    """Stripe's PaymentIntents/Refunds wire format, strictly."""

    content_types = ("application/x-www-form-urlencoded",)

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.intents: dict[str, dict[str, Any]] = {}
        #: Idempotency-Key -> (method, path, body, answer) of its first use.
        self.replays: dict[str, tuple[str, str, bytes, Answer]] = {}

    error = staticmethod(_stripe_error)

    def authorized(self, headers: dict[str, str]) -> bool:
        return headers.get("authorization") == f"Bearer {self.key}"

    def unauthorized(self) -> Answer:
        return _stripe_error(401, "invalid_request_error", "Invalid API Key provided: sk_test_****")

    def bad_request(self, message: str) -> Answer:
        return _stripe_error(
            400,
            "invalid_request_error",
            "Invalid request (check that your POST content type is "
            f"application/x-www-form-urlencoded): {message}",
        )

    def malformed(self, request: Received) -> Answer | None:
        version = request.header("stripe-version") or ""
        if not _DATED.fullmatch(version):
            return _stripe_error(
                400, "invalid_request_error", f"Invalid Stripe API version: {version!r}"
            )
        form_encoded = request.content_type == "application/x-www-form-urlencoded"
        if request.method == "POST" and request.raw and not form_encoded:
            return self.bad_request(f"unsupported content type {request.content_type!r}")
        key = request.header("idempotency-key")
        if key is not None and not 0 < len(key) <= 255:
            return _stripe_error(
                400,
                "invalid_request_error",
                "Idempotency-Key must be at most 255 characters long",
                param="Idempotency-Key",
            )
        return self._parameters(request)

    def _parameters(self, request: Received) -> Answer | None:
        if request.method != "POST":
            return None
        endpoint = self._endpoint(request.path)
        if endpoint is None:
            return None
        form = request.form()
        for name in form:
            base = name.split("[", 1)[0]
            if base not in _STRIPE_PARAMS[endpoint]:
                return _stripe_error(
                    400,
                    "invalid_request_error",
                    f"Received unknown parameter: {name}",
                    "parameter_unknown",
                    name,
                )
        for name in _REQUIRED.get(endpoint, ()):
            if not form.get(name):
                return _stripe_error(
                    400,
                    "invalid_request_error",
                    f"Missing required param: {name}.",
                    "parameter_missing",
                    name,
                )
        for name in ("amount", "amount_to_capture"):
            if name in form and not form[name].isdigit():
                return _stripe_error(
                    400,
                    "invalid_request_error",
                    f"Invalid integer: {form[name]}",
                    "parameter_invalid_integer",
                    name,
                )
        if endpoint == "create" and form.get("capture_method", "automatic") not in (
            _CAPTURE_METHODS
        ):
            return _stripe_error(
                400, "invalid_request_error", "Invalid capture_method", "parameter_invalid_enum"
            )
        if endpoint == "refund":
            if not (form.get("payment_intent") or form.get("charge")):
                return _stripe_error(
                    400,
                    "invalid_request_error",
                    "One of the following params should be provided for this request: "
                    "payment_intent or charge.",
                    "parameter_missing",
                )
            if form.get("reason", "duplicate") not in _REFUND_REASONS:
                return _stripe_error(
                    400, "invalid_request_error", "Invalid reason", "parameter_invalid_enum"
                )
        return None

    @staticmethod
    def _endpoint(path: str) -> str | None:
        parts = path.strip("/").split("/")
        if parts == ["v1", "payment_intents"]:
            return "create"
        if parts == ["v1", "refunds"]:
            return "refund"
        if len(parts) == 4 and parts[:2] == ["v1", "payment_intents"]:
            return parts[3] if parts[3] in ("capture", "cancel") else None
        return None

    def answer(self, handler: Any, request: Received) -> None:
        key = request.header("idempotency-key")
        if request.method != "POST" or not key:
            return super().answer(handler, request)
        with self._route_lock:
            first = self.replays.get(key)
            if first is None:
                answer = self.route(request)
                self.replays[key] = (request.method, request.path, request.raw, answer)
                return handler.send_json(*answer)
        method, path, raw, answer = first
        if (method, path, raw) != (request.method, request.path, request.raw):
            return handler.send_json(
                *_stripe_error(
                    400,
                    "idempotency_error",
                    "Keys for idempotent requests can only be used with the same parameters "
                    f"they were first used with. Try using a key other than '{key}' if you "
                    "meant to execute a different request.",
                )
            )
        return handler.send_json(*answer, {"Idempotent-Replayed": "true"})

    def route(self, seen: Received) -> Answer:
        path = seen.path
        form = seen.form() if seen.method == "POST" else {}
        parts = path.strip("/").split("/")
        if seen.method == "POST" and path == "/v1/payment_intents":
            if int(form["amount"]) < 50:
                return _stripe_error(
                    400,
                    "invalid_request_error",
                    "Amount must be at least $0.50 usd",
                    "amount_too_small",
                    "amount",
                )
            pid = f"pi_{secrets.token_hex(8)}"
            intent = {
                "id": pid,
                "object": "payment_intent",
                "amount": int(form["amount"]),
                "currency": form["currency"],
                "capture_method": form.get("capture_method", "automatic"),
                "client_secret": f"{pid}_secret_{secrets.token_hex(8)}",
                "status": "requires_payment_method",
                "last_payment_error": None,
                "livemode": False,
                "metadata": {
                    k[len("metadata[") : -1]: v
                    for k, v in form.items()
                    if k.startswith("metadata[")
                },
            }
            self.intents[pid] = intent
            return 200, intent
        if len(parts) >= 3 and parts[:2] == ["v1", "payment_intents"]:
            intent = self.intents.get(parts[2])
            if intent is None:
                return _stripe_error(
                    404, "invalid_request_error", "No such payment_intent", "resource_missing"
                )
            if seen.method == "GET" and len(parts) == 3:
                return 200, intent
            action = parts[3] if len(parts) == 4 else ""
            if action == "capture":
                if intent["status"] != "requires_capture":
                    return _stripe_error(
                        400,
                        "invalid_request_error",
                        "This PaymentIntent could not be captured",
                        "payment_intent_unexpected_state",
                    )
                if "amount_to_capture" in form:
                    intent["amount_received"] = int(form["amount_to_capture"])
                intent["status"] = "succeeded"
                return 200, intent
            if action == "cancel":
                intent["status"] = "canceled"
                return 200, intent
        if seen.method == "POST" and path == "/v1/refunds":
            intent = self.intents.get(form.get("payment_intent", ""))
            if intent is None or intent["status"] != "succeeded":
                return _stripe_error(
                    400, "invalid_request_error", "not refundable", "charge_not_refundable"
                )
            refund = {
                "id": f"re_{secrets.token_hex(8)}",
                "object": "refund",
                "amount": int(form.get("amount") or intent["amount"]),
                "payment_intent": intent["id"],
                "status": "succeeded",
                "reason": form.get("reason"),
            }
            if self.on_refund is not None:
                self.on_refund(refund)
            return 200, refund
        return _stripe_error(404, "invalid_request_error", "Unrecognized request URL")


# ---------------------------------------------------------------------- Paddle


def _paddle_error(status: int, code: str, detail: str, errors: list | None = None) -> Answer:
    body: dict[str, Any] = {
        "type": "request_error",
        "code": code,
        "detail": detail,
        "documentation_url": f"https://developer.paddle.com/v1/errors/shared/{code}",
    }
    if errors:
        body["errors"] = errors
    return status, {"error": body, "meta": {"request_id": secrets.token_hex(8)}}


def _invalid(field: str, message: str) -> Answer:
    return _paddle_error(
        400,
        "invalid_field",
        "Request does not pass validation.",
        [{"field": field, "message": message}],
    )


_CURRENCY = re.compile(r"[A-Z]{3}")


class ProviderB(Provider):
    """Paddle Billing's transactions/adjustments wire format, strictly."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.transactions: dict[str, dict[str, Any]] = {}

    error = staticmethod(_paddle_error)

    @staticmethod
    def ok(status: int, data: dict[str, Any]) -> Answer:
        return status, {"data": data, "meta": {"request_id": secrets.token_hex(8)}}

    def authorized(self, headers: dict[str, str]) -> bool:
        """Refuse (403) another well-formed key; a missing or malformed one is a 401 of
        :meth:`malformed`, as Paddle tells the two apart."""
        auth = headers.get("authorization", "")
        return not auth.startswith("Bearer ") or auth == f"Bearer {self.key}"

    def unauthorized(self) -> Answer:
        return _paddle_error(403, "forbidden", "You aren't permitted to perform this request.")

    def bad_request(self, message: str) -> Answer:
        return _paddle_error(400, "invalid_json", message)

    def malformed(self, request: Received) -> Answer | None:
        auth = request.header("authorization")
        if not auth:
            return _paddle_error(401, "authentication_missing", "Authentication header missing.")
        if not auth.startswith("Bearer ") or not auth[len("Bearer ") :].strip():
            return _paddle_error(
                401, "authentication_malformed", "Authentication header is malformed."
            )
        if request.header("paddle-version") != "1":
            return _paddle_error(400, "invalid_api_version", "Paddle-Version must be 1")
        refusal = super().malformed(request)
        if refusal is not None or request.method not in ("POST", "PATCH"):
            return refusal
        if not request.raw:
            return self.bad_request("The request body is not a JSON object")
        body = request.body
        if request.path == "/transactions":
            return self._transaction(body)
        if request.path == "/adjustments":
            return self._adjustment(body)
        return None

    @staticmethod
    def _transaction(body: dict[str, Any]) -> Answer | None:
        items = body.get("items")
        if not isinstance(items, list) or not items:
            return _invalid("items", "required")
        if body.get("currency_code") is not None and not _CURRENCY.fullmatch(
            str(body["currency_code"])
        ):
            return _invalid("currency_code", "must be a supported three-letter currency code")
        for index, item in enumerate(items):
            if not isinstance(item.get("quantity"), int) or item["quantity"] < 1:
                return _invalid(f"items[{index}].quantity", "must be a positive integer")
            price = item.get("price")
            if "price_id" in item:
                continue
            if not isinstance(price, dict):
                return _invalid(f"items[{index}].price", "one of price_id or price is required")
            unit = price.get("unit_price") or {}
            amount = unit.get("amount")
            if not (isinstance(amount, str) and amount.isdigit()):  # strings of digits
                return _invalid(f"items[{index}].price.unit_price.amount", "must be a string")
            if not _CURRENCY.fullmatch(str(unit.get("currency_code", ""))):
                return _invalid(f"items[{index}].price.unit_price.currency_code", "invalid")
            if not price.get("description") and not price.get("name"):
                return _invalid(f"items[{index}].price.description", "required")
        return None

    @staticmethod
    def _adjustment(body: dict[str, Any]) -> Answer | None:
        for name in ("action", "transaction_id", "reason"):
            if not body.get(name):
                return _invalid(name, "required")
        if body["action"] not in ("refund", "credit"):
            return _invalid("action", "must be one of refund, credit")
        kind = body.get("type", "partial")
        if kind not in ("full", "partial"):
            return _invalid("type", "must be one of full, partial")
        if kind == "partial":
            items = body.get("items")
            if not isinstance(items, list) or not items:
                return _invalid("items", "required for a partial adjustment")
            for index, item in enumerate(items):
                if not item.get("item_id") or item.get("type") not in ("full", "partial"):
                    return _invalid(f"items[{index}]", "item_id and type are required")
                amount = item.get("amount")
                if item["type"] == "partial" and not (isinstance(amount, str) and amount.isdigit()):
                    return _invalid(f"items[{index}].amount", "must be a string of digits")
        elif "items" in body:
            return _invalid("items", "must not be set for a full adjustment")
        return None

    def route(self, seen: Received) -> Answer:
        path = seen.path
        body = seen.body if isinstance(seen.body, dict) else {}
        if seen.method == "POST" and path == "/transactions":
            items = body["items"]
            tid = f"txn_{secrets.token_hex(8)}"
            price = items[0]["price"]
            txn = {
                "id": tid,
                "status": "ready",
                "currency_code": body["currency_code"],
                "collection_mode": body.get("collection_mode", "automatic"),
                "origin": "api",
                "custom_data": body.get("custom_data"),
                "checkout": {"url": f"https://pay.example.invalid/checkout?_ptxn={tid}"},
                "details": {
                    "totals": {"total": price["unit_price"]["amount"]},
                    "line_items": [
                        {
                            "id": f"txnitm_{secrets.token_hex(8)}",
                            "quantity": 1,
                            "totals": {"total": price["unit_price"]["amount"]},
                        }
                    ],
                },
            }
            self.transactions[tid] = txn
            return self.ok(201, txn)
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "transactions":
            txn = self.transactions.get(parts[1])
            if txn is None:
                return _paddle_error(404, "entity_not_found", "Entity not found.")
            if seen.method == "GET":
                return self.ok(200, txn)
            if seen.method == "PATCH":
                if body.get("status") == "canceled" and txn["status"] in ("draft", "ready"):
                    txn["status"] = "canceled"
                    return self.ok(200, txn)
                return _paddle_error(400, "transaction_immutable", "Transaction cannot be updated.")
        if seen.method == "POST" and path == "/adjustments":
            txn = self.transactions.get(body.get("transaction_id", ""))
            if txn is None or txn["status"] != "completed":
                return _paddle_error(
                    400,
                    "adjustment_transaction_invalid_status_for_refund",
                    "Transaction status must be completed to create a refund.",
                )
            adjustment = {
                "id": f"adj_{secrets.token_hex(8)}",
                "action": "refund",
                "transaction_id": txn["id"],
                "type": body.get("type"),
                "status": "pending_approval",
                "reason": body.get("reason"),
                "items": body.get("items", []),
            }
            if self.on_refund is not None:
                self.on_refund(adjustment)
            return self.ok(201, adjustment)
        return _paddle_error(404, "not_found", "Not found.")

"""Local stand-ins for the two payment providers, on 127.0.0.1, speaking their wire format.

``ProviderA`` answers like the PaymentIntents API (form-encoded requests, ``Authorization:
Bearer sk_...``, ``Idempotency-Key`` replays, ``{"error": {"type", "code", "message",
"param"}}`` error bodies); ``ProviderB`` like the transactions/adjustments API (JSON
requests, ``Authorization: Bearer``, ``Paddle-Version: 1``, ``{"data": ...,
"meta": {"request_id"}}`` answers and ``{"error": {"type", "code", "detail",
"documentation_url"}}`` error bodies). Both record every request (method, path,
headers, raw body) for the tests to assert what the adapter sent.
"""

from __future__ import annotations

import http.server
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.ports import free_port


@dataclass
class Seen:
    """One request a provider server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers.items():
            if key.lower() == name.lower():
                return value
        return None

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode(), keep_blank_values=True))

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Provider:
    """A threaded HTTP server on 127.0.0.1 routing to :meth:`route`."""

    key: str
    port: int = field(default_factory=free_port)
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: Any = None
    #: Called with each new refund object before the provider answers the refund request,
    #: as a provider's webhook may reach the merchant before the API answer does.
    on_refund: Callable[[dict[str, Any]], None] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests(self, method: str | None = None, path: str | None = None) -> list[Seen]:
        with self.lock:
            return [
                s
                for s in self.seen
                if (method is None or s.method == method) and (path is None or s.path == path)
            ]

    def route(self, seen: Seen) -> tuple[int, Any]:
        raise NotImplementedError

    def start(self) -> Provider:
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without this, Nagle's algorithm and
            # the client's delayed ACK add 40 ms to every keep-alive request.
            disable_nagle_algorithm = True

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Seen(self.command, self.path, dict(self.headers.items()), body)
                with provider.lock:
                    provider.seen.append(seen)
                    status, answer = provider.route(seen)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class ProviderA(Provider):
    """The PaymentIntents/Refunds wire format."""

    def __init__(self, key: str) -> None:
        super().__init__(key=key)
        self.intents: dict[str, dict[str, Any]] = {}
        self.replays: dict[str, tuple[int, Any]] = {}

    @staticmethod
    def error(status: int, kind: str, message: str, code: str = "", param: str = "") -> tuple:
        body: dict[str, Any] = {"type": kind, "message": message}
        if code:
            body["code"] = code
        if param:
            body["param"] = param
        return status, {"error": body}

    def route(self, seen: Seen) -> tuple[int, Any]:
        if seen.header("Authorization") != f"Bearer {self.key}":
            return self.error(
                401, "invalid_request_error", "Invalid API Key provided: sk_test_****"
            )
        key = seen.header("Idempotency-Key")
        if seen.method == "POST" and key and key in self.replays:
            return self.replays[key]
        answer = self._route(seen)
        if seen.method == "POST" and key:
            self.replays[key] = answer
        return answer

    def _route(self, seen: Seen) -> tuple[int, Any]:
        path = urlsplit(seen.path).path
        form = seen.form() if seen.method == "POST" else {}
        parts = path.strip("/").split("/")
        if seen.method == "POST" and path == "/v1/payment_intents":
            if int(form.get("amount", "0")) < 50:
                return self.error(
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
                return self.error(
                    404, "invalid_request_error", "No such payment_intent", "resource_missing"
                )
            if seen.method == "GET" and len(parts) == 3:
                return 200, intent
            action = parts[3] if len(parts) == 4 else ""
            if action == "capture":
                if intent["status"] != "requires_capture":
                    return self.error(
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
                return self.error(
                    400, "invalid_request_error", "not refundable", "charge_not_refundable"
                )
            refund = {
                "id": f"re_{secrets.token_hex(8)}",
                "object": "refund",
                "amount": int(form["amount"]),
                "payment_intent": intent["id"],
                "status": "succeeded",
                "reason": form.get("reason"),
            }
            if self.on_refund is not None:
                self.on_refund(refund)
            return 200, refund
        return self.error(404, "invalid_request_error", "Unrecognized request URL")


class ProviderB(Provider):
    """The transactions/adjustments wire format."""

    def __init__(self, key: str) -> None:
        super().__init__(key=key)
        self.transactions: dict[str, dict[str, Any]] = {}

    @staticmethod
    def error(status: int, code: str, detail: str, errors: list | None = None) -> tuple:
        body: dict[str, Any] = {
            "type": "request_error",
            "code": code,
            "detail": detail,
            "documentation_url": f"https://developer.paddle.com/v1/errors/shared/{code}",
        }
        if errors:
            body["errors"] = errors
        return status, {"error": body, "meta": {"request_id": secrets.token_hex(8)}}

    @staticmethod
    def ok(status: int, data: dict[str, Any]) -> tuple:
        return status, {"data": data, "meta": {"request_id": secrets.token_hex(8)}}

    def route(self, seen: Seen) -> tuple[int, Any]:
        if seen.header("Authorization") != f"Bearer {self.key}":
            return self.error(403, "forbidden", "You aren't permitted to perform this request.")
        path = urlsplit(seen.path).path
        body = seen.json() if seen.body else {}
        if seen.method == "POST" and path == "/transactions":
            items = body.get("items") or []
            if not items:
                return self.error(
                    400,
                    "bad_request",
                    "Invalid request.",
                    [{"field": "items", "message": "required"}],
                )
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
                return self.error(404, "entity_not_found", "Entity not found.")
            if seen.method == "GET":
                return self.ok(200, txn)
            if seen.method == "PATCH":
                if body.get("status") == "canceled" and txn["status"] in ("draft", "ready"):
                    txn["status"] = "canceled"
                    return self.ok(200, txn)
                return self.error(400, "transaction_immutable", "Transaction cannot be updated.")
        if seen.method == "POST" and path == "/adjustments":
            txn = self.transactions.get(body.get("transaction_id", ""))
            if txn is None or txn["status"] != "completed":
                return self.error(
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
        return self.error(404, "not_found", "Not found.")

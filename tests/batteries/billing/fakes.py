"""Local stand-ins for the two billing providers, speaking their documented wire formats.

Each fake is an ``http.server`` on 127.0.0.1 that records every request (method, path,
query, headers, decoded body) and answers with the provider's shapes:

* :class:`FakeStripe` (``billing_a``): form-encoded bodies (``items[0][price]=...``),
  ``Authorization: Bearer <secret key>``, objects with ``"object": "customer"`` etc.,
  lists as ``{"object": "list", "data": [...]}``, errors as
  ``{"error": {"type", "code", "message"}}`` (404 ``resource_missing``, 401 without a key).
* :class:`FakePaddle` (``billing_b``): JSON bodies, ``Authorization: Bearer <api key>`` and
  ``Paddle-Version: 1``, answers as ``{"data": ..., "meta": {"request_id"}}``, errors as
  ``{"error": {"type", "code", "detail", "documentation_url"}, "meta": ...}``.

A request without the expected key gets the provider's 401 answer, so a wrong auth header
fails the test through the adapter as well as through the recorded request.
"""

from __future__ import annotations

import http.server
import json
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

STRIPE_KEY = "sk_test_51BillingFakeKey0123456789abcdef"
PADDLE_KEY = "pdl_sdbx_apikey_01billingfakekey0123456789"


@dataclass
class Seen:
    """One request a fake received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw: bytes
    body: Any


@dataclass
class Fake:
    """Common part: the server, the recorded requests, the per-request lock."""

    key: str
    port: int = 0  # bound at start (port 0: no probe-then-bind race)
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: Any = None
    #: Answers sent instead of the routed one, first in first out, to the next requests:
    #: ``(status, body, headers)`` (a provider's 429 with its ``Retry-After``).
    failures: deque[tuple[int, Any, dict[str, str]]] = field(default_factory=deque)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests_to(self, method: str, pattern: str) -> list[Seen]:
        """Return the recorded requests whose method matches and whose path matches ``pattern``."""
        with self.lock:
            return [s for s in self.seen if s.method == method and re.fullmatch(pattern, s.path)]

    def start(self) -> Fake:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body leave in two writes: without this, Nagle plus delayed ACKs
            # add ~40 ms to every keep-alive answer.
            disable_nagle_algorithm = True

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                seen = Seen(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    raw,
                    fake.decode(raw, self.headers.get("Content-Type") or ""),
                )
                extra: dict[str, str] = {}
                with fake.lock:
                    fake.seen.append(seen)
                    if fake.failures:
                        status, answer, extra = fake.failures.popleft()
                    else:
                        refused = fake.refusal(seen)
                        status, answer = refused if refused else fake.answer(seen)
                data = json.dumps(answer).encode()
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Request-Id", "req_" + secrets.token_hex(6))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PATCH = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        self.server.daemon_threads = True
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def decode(self, raw: bytes, content_type: str) -> Any:
        raise NotImplementedError

    def refusal(self, seen: Seen) -> tuple[int, Any] | None:
        """Return the provider's answer to a request it would refuse whatever its path.

        The stand-ins are strict, as the providers are, so an adapter that sends the wrong
        content type or leaves out the API version header fails its test.
        """
        return None

    def answer(self, seen: Seen) -> tuple[int, Any]:
        raise NotImplementedError


def _now() -> int:
    return int(time.time())


@dataclass
class FakeStripe(Fake):
    """Customers, subscriptions, invoices and sessions of the Stripe API (v1)."""

    key: str = STRIPE_KEY
    customers: dict[str, dict[str, Any]] = field(default_factory=dict)
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    invoices: list[dict[str, Any]] = field(default_factory=list)

    def decode(self, raw: bytes, content_type: str) -> Any:
        if raw and content_type.split(";")[0].strip() != "application/x-www-form-urlencoded":
            return None  # refused by refusal(): the API reads form bodies only
        return {k: v[0] for k, v in parse_qs(raw.decode(), keep_blank_values=True).items()}

    def refusal(self, seen: Seen) -> tuple[int, Any] | None:
        if seen.raw and seen.body is None:
            return self.error(400, "parameter_invalid_empty", "Invalid request body")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}(\.\w+)?", seen.headers.get("stripe-version", "")):
            return self.error(400, "api_version_invalid", "Invalid Stripe API version")
        return None

    @staticmethod
    def error(status: int, code: str, message: str) -> tuple[int, Any]:
        kind = "invalid_request_error" if status != 401 else "authentication_error"
        return status, {"error": {"type": kind, "code": code, "message": message}}

    def answer(self, seen: Seen) -> tuple[int, Any]:
        if seen.headers.get("authorization") != f"Bearer {self.key}":
            return self.error(401, "api_key_invalid", "Invalid API Key provided")
        method, path, body = seen.method, seen.path, seen.body
        if (method, path) == ("POST", "/v1/customers"):
            ident = "cus_" + secrets.token_hex(7)
            customer = {
                "id": ident,
                "object": "customer",
                "email": body.get("email"),
                "name": body.get("name"),
                "created": _now(),
                "livemode": False,
            }
            self.customers[ident] = customer
            return 200, customer
        if (method, path) == ("POST", "/v1/subscriptions"):
            if body.get("customer") not in self.customers:
                return self.error(400, "resource_missing", "No such customer")
            ident = "sub_" + secrets.token_hex(7)
            trial = int(body.get("trial_period_days") or 0)
            end = _now() + (trial or 30) * 86400
            sub = {
                "id": ident,
                "object": "subscription",
                "customer": body["customer"],
                "status": "trialing" if trial else "active",
                "cancel_at_period_end": False,
                "items": {
                    "object": "list",
                    "data": [
                        {
                            "id": "si_" + secrets.token_hex(6),
                            "object": "subscription_item",
                            "price": {"id": body.get("items[0][price]"), "object": "price"},
                            "current_period_end": end,
                        }
                    ],
                },
            }
            self.subscriptions[ident] = sub
            self.invoices.insert(
                0,
                {
                    "id": "in_" + secrets.token_hex(7),
                    "object": "invoice",
                    "customer": body["customer"],
                    "subscription": ident,
                    "status": "paid",
                    "amount_due": 0 if trial else 1500,
                    "currency": "usd",
                    "hosted_invoice_url": "https://invoice.stripe.com/i/acct_1/test_x",
                },
            )
            return 200, sub
        match = re.fullmatch(r"/v1/subscriptions/([^/]+)", path)
        if match:
            sub = self.subscriptions.get(match.group(1))
            if sub is None:
                return self.error(404, "resource_missing", "No such subscription")
            if method == "DELETE":
                sub["status"] = "canceled"
            elif method == "POST" and body.get("cancel_at_period_end") == "true":
                sub["cancel_at_period_end"] = True
            return 200, sub
        if (method, path) == ("GET", "/v1/invoices"):
            customer = seen.query.get("customer", [""])[0]
            limit = int(seen.query.get("limit", ["10"])[0])
            rows = [i for i in self.invoices if i["customer"] == customer][:limit]
            return 200, {"object": "list", "data": rows, "has_more": False, "url": "/v1/invoices"}
        if (method, path) == ("POST", "/v1/checkout/sessions"):
            ident = "cs_test_" + secrets.token_hex(8)
            return 200, {
                "id": ident,
                "object": "checkout.session",
                "mode": body.get("mode"),
                "url": f"https://checkout.stripe.com/c/pay/{ident}",
            }
        if (method, path) == ("POST", "/v1/billing_portal/sessions"):
            return 200, {
                "id": "bps_" + secrets.token_hex(6),
                "object": "billing_portal.session",
                "url": "https://billing.stripe.com/p/session/test_" + secrets.token_hex(6),
            }
        if (method, path) == ("GET", "/v1/balance"):
            return 200, {"object": "balance", "available": [], "pending": []}
        return self.error(404, "resource_missing", "Unrecognized request URL")


@dataclass
class FakePaddle(Fake):
    """Customers, transactions, subscriptions and portal sessions of Paddle Billing."""

    key: str = PADDLE_KEY
    customers: dict[str, dict[str, Any]] = field(default_factory=dict)
    transactions: list[dict[str, Any]] = field(default_factory=list)
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def decode(self, raw: bytes, content_type: str) -> Any:
        if not raw or content_type.split(";")[0].strip() != "application/json":
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def refusal(self, seen: Seen) -> tuple[int, Any] | None:
        if seen.headers.get("paddle-version") != "1":
            return self.error(400, "invalid_api_version", "Paddle-Version must be 1")
        if seen.raw and not isinstance(seen.body, dict):
            return self.error(400, "invalid_json", "The request body is not a JSON object")
        return None

    @staticmethod
    def ok(data: Any) -> tuple[int, Any]:
        return 200, {"data": data, "meta": {"request_id": secrets.token_hex(8)}}

    @staticmethod
    def error(status: int, code: str, detail: str) -> tuple[int, Any]:
        return status, {
            "error": {
                "type": "request_error",
                "code": code,
                "detail": detail,
                "documentation_url": f"https://developer.paddle.com/errors/shared/{code}",
            },
            "meta": {"request_id": secrets.token_hex(8)},
        }

    def subscription(self, ident: str, customer: str, status: str = "active") -> dict[str, Any]:
        """Seed (and return) a subscription object as the API returns it."""
        sub = {
            "id": ident,
            "status": status,
            "customer_id": customer,
            "currency_code": "USD",
            "items": [{"status": "active", "quantity": 1, "price": {"id": "pri_basic"}}],
            "current_billing_period": {
                "starts_at": "2026-11-01T00:00:00Z",
                "ends_at": "2026-12-01T00:00:00Z",
            },
            "scheduled_change": None,
        }
        self.subscriptions[ident] = sub
        return sub

    def answer(self, seen: Seen) -> tuple[int, Any]:
        if seen.headers.get("authorization") != f"Bearer {self.key}":
            return self.error(403, "forbidden", "You aren't permitted to perform this request.")
        method, path, body = seen.method, seen.path, seen.body or {}
        if (method, path) == ("POST", "/customers"):
            ident = "ctm_" + secrets.token_hex(13)
            customer = {"id": ident, "email": body.get("email"), "name": body.get("name")}
            customer["status"] = "active"
            self.customers[ident] = customer
            return self.ok(customer)
        if (method, path) == ("POST", "/transactions"):
            ident = "txn_" + secrets.token_hex(13)
            txn = {
                "id": ident,
                "status": "ready",
                "customer_id": body.get("customer_id"),
                "subscription_id": None,
                "currency_code": "USD",
                "items": body.get("items"),
                "details": {"totals": {"grand_total": "1500"}},
                "checkout": {"url": f"https://pay.example.com/checkout?_ptxn={ident}"},
            }
            self.transactions.insert(0, txn)
            return self.ok(txn)
        if (method, path) == ("GET", "/transactions"):
            customer = seen.query.get("customer_id", [""])[0]
            per_page = int(seen.query.get("per_page", ["50"])[0])
            rows = [t for t in self.transactions if t["customer_id"] == customer][:per_page]
            return self.ok(rows)
        match = re.fullmatch(r"/subscriptions/([^/]+)(/cancel)?", path)
        if match:
            sub = self.subscriptions.get(match.group(1))
            if sub is None:
                return self.error(404, "entity_not_found", "Entity not found")
            if match.group(2) and method == "POST":
                if body.get("effective_from") == "next_billing_period":
                    sub["scheduled_change"] = {
                        "action": "cancel",
                        "effective_at": "2026-12-01T00:00:00Z",
                    }
                else:
                    sub["status"] = "canceled"
            return self.ok(sub)
        match = re.fullmatch(r"/customers/([^/]+)/portal-sessions", path)
        if match and method == "POST":
            return self.ok(
                {
                    "id": "cpls_" + secrets.token_hex(13),
                    "customer_id": match.group(1),
                    "urls": {
                        "general": {"overview": "https://customer-portal.paddle.com/cpl_x?token=t"},
                        "subscriptions": [],
                    },
                }
            )
        if (method, path) == ("GET", "/event-types"):
            return self.ok([])
        return self.error(404, "not_found", "Not found")

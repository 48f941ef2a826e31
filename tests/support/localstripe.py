"""localstripe on 127.0.0.1: the Stripe emulator behind the ``payment_a``/``billing_a`` tests.

localstripe is GPL-licensed, so it runs as a separate process (its console script from the
dev extra) and is never imported. ``--from-scratch`` starts it empty. The helpers drive it
the way a customer's browser and Stripe's dashboard would (attach a card, confirm, register
a webhook endpoint), with the standard library, never through the adapter under test.

What localstripe does not emulate (and so stays proven by the wire-format tests only):
``description`` on PaymentIntents, idempotency keys (it makes a second object for a
replayed key), refunds larger than what was captured (it accepts them), and the event
``charge.refunded``; it also captures an intent canceled behind its back.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.ports import accepting
from tests.support.processes import ProductProcess, venv_script

#: Any ``sk_test_`` key is accepted; this one is the tests' own.
SECRET_KEY = "sk_test_localstripeKey0123456789"
START_TIMEOUT = 60.0
#: Card numbers of Stripe's test-card table that localstripe understands.
CARD_OK = "4242424242424242"
CARD_DECLINED = "4000000000000341"  # attaches, then every charge is declined


class LocalStripe(ProductProcess):
    """One localstripe process, stopped on ``__exit__``."""

    name = "localstripe"
    log_name = "localstripe.log"
    start_timeout = START_TIMEOUT

    def __enter__(self) -> LocalStripe:
        script = venv_script("localstripe", "localstripe (dev extra)")
        command = [script, "--port", str(self.port), "--from-scratch"]
        self.launch(command, cwd=self.log_path.parent)
        return self

    def ready(self) -> bool:
        return accepting(self.port)

    # ------------------------------------------------------------------ the API

    def call(self, method: str, path: str, **form: Any) -> tuple[int, dict[str, Any]]:
        """Send one form-encoded request as Stripe's API takes it; return status and JSON."""
        data = urllib.parse.urlencode(_flatten(form)).encode() if form else None
        if method == "GET" and data:
            path, data = f"{path}?{data.decode()}", None
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {SECRET_KEY}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as refused:
            return refused.code, json.loads(refused.read() or b"{}")

    def ok(self, method: str, path: str, **form: Any) -> dict[str, Any]:
        status, body = self.call(method, path, **form)
        assert status == 200, (method, path, status, body)
        return body

    def customer_pays(self, intent_id: str, card: str = CARD_OK) -> dict[str, Any]:
        """Attach a card to the PaymentIntent and confirm it, as Stripe.js would."""
        method = self.ok(
            "POST",
            "/v1/payment_methods",
            type="card",
            card={"number": card, "exp_month": 12, "exp_year": 2034, "cvc": "123"},
        )
        self.ok("POST", f"/v1/payment_intents/{intent_id}", payment_method=method["id"])
        return self.call("POST", f"/v1/payment_intents/{intent_id}/confirm")[1]

    def intent(self, intent_id: str) -> dict[str, Any]:
        return self.ok("GET", f"/v1/payment_intents/{intent_id}")

    def charge_of(self, intent_id: str) -> dict[str, Any]:
        """Return the latest charge of ``intent_id``."""
        charge = self.intent(intent_id)["latest_charge"]
        return self.ok("GET", f"/v1/charges/{charge['id'] if isinstance(charge, dict) else charge}")

    def refunds_of(self, intent_id: str) -> list[dict[str, Any]]:
        """Return the refunds localstripe holds for ``intent_id``'s charge."""
        charge_id = self.charge_of(intent_id)["id"]
        return [
            refund
            for refund in self.ok("GET", "/v1/refunds", limit=100)["data"]
            if refund.get("charge") in (charge_id, {"id": charge_id})
            or refund.get("payment_intent") == intent_id
        ]

    def send_webhooks_to(self, url: str, secret: str, name: str = "tests") -> None:
        """Register a webhook endpoint: localstripe then POSTs every event, signed."""
        status, body = self.call("POST", f"/_config/webhooks/{name}", url=url, secret=secret)
        assert status == 200, (status, body)


def _flatten(form: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Encode nested dicts as Stripe's ``card[number]=...`` form keys."""
    pairs: list[tuple[str, str]] = []
    for key, value in form.items():
        name = f"{prefix}[{key}]" if prefix else key
        if isinstance(value, dict):
            pairs.extend(_flatten(value, name))
        else:
            pairs.append((name, str(value)))
    return pairs


class WebhookRecorder:
    """An HTTP receiver on 127.0.0.1 (port 0) that keeps every POST's body and headers."""

    def __init__(self) -> None:
        self.received: list[tuple[bytes, dict[str, str]]] = []
        self._arrived = threading.Condition()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with recorder._arrived:
                    recorder.received.append((body, dict(self.headers.items())))
                    recorder._arrived.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hooks/stripe"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> WebhookRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def event(self, kind: str, object_id: str, timeout: float = 30.0) -> tuple[bytes, dict]:
        """Wait (bounded) for the event ``kind`` about ``object_id``; return body and headers."""
        deadline = time.monotonic() + timeout

        def found() -> tuple[bytes, dict] | None:
            for body, headers in self.received:
                payload = json.loads(body)
                if payload.get("type") == kind and payload["data"]["object"].get("id") == object_id:
                    return body, headers
            return None

        with self._arrived:
            while (hit := found()) is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    kinds = [json.loads(body).get("type") for body, _ in self.received]
                    raise AssertionError(f"no {kind} for {object_id}; received {kinds}")
                self._arrived.wait(left)
        return hit

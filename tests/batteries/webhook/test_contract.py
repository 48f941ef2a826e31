"""One contract, every adapter: signing, retries, refusals, the delivery log.

Each test runs on ``http`` (rows on SQLite and on PostgreSQL) and on ``queue`` (a memory
queue, a kvserver queue on the real Redis, a db queue on the real PostgreSQL), against a
local receiver. Signatures are checked with an HMAC written here from the documented
format, not with the battery's own code.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import socket
import time
from datetime import timedelta
from typing import Any

import pytest

from toolkit_batteries.core.groups import ResilienceRetryPolicy
from toolkit_batteries.webhook import TargetRefusedError, verify
from toolkit_batteries.webhook.models import WebhookDelivery

from .conftest import SECRET, VARIANTS


def independent_signature(secret: str, headers: Any, body: bytes) -> str:
    """Sign as documented: ``v1,`` + base64 HMAC-SHA256 of ``<id>.<timestamp>.<body>``, then
    ``v1e,`` + base64 HMAC-SHA256 of ``<id>.<timestamp>.<event>\n<body>``."""
    stamp, ident, event = (
        headers["Webhook-Timestamp"],
        headers["Webhook-Id"],
        headers["Webhook-Event"],
    )
    key = secret.encode("utf-8")
    standard = hmac.new(key, f"{ident}.{stamp}.".encode() + body, hashlib.sha256).digest()
    bound = hmac.new(key, f"{ident}.{stamp}.{event}\n".encode() + body, hashlib.sha256).digest()
    return f"v1,{base64.b64encode(standard).decode()} v1e,{base64.b64encode(bound).decode()}"


def flat_policy(base: float) -> ResilienceRetryPolicy:
    """Exponential backoff without jitter, so the expected gaps are exact."""
    return ResilienceRetryPolicy(
        base_delay=timedelta(seconds=base), multiplier=2.0, jitter=0.0, max_delay=timedelta(0)
    )


class TestWebhookContract:
    def test_a_delivery_is_signed_in_the_documented_format(self, opened, receiver):
        delivery = opened.hook.send(
            receiver.url("/orders"), {"id": 42, "total": "9.50"}, event="order.paid", secret=SECRET
        )
        settled = opened.settle(delivery.id)
        assert settled.status == "succeeded" and settled.attempts == 1
        (got,) = receiver.wait_for(1)
        assert got.path == "/orders"
        assert got.body == b'{"id":42,"total":"9.50"}'
        assert got.headers["Content-Type"] == "application/json"
        assert got.headers["Webhook-Id"] == delivery.id
        assert got.headers["Webhook-Event"] == "order.paid"
        stamp = got.headers["Webhook-Timestamp"]
        assert abs(int(stamp) - time.time()) < 60
        assert got.headers["Webhook-Signature"] == independent_signature(
            SECRET, got.headers, got.body
        )
        assert verify(got.headers, got.body, SECRET) == int(stamp)
        row = WebhookDelivery.objects.using(opened.hook.database.alias).get(delivery_id=delivery.id)
        assert (row.status, row.attempts, row.response_status, row.event) == (
            "succeeded",
            1,
            200,
            "order.paid",
        )
        assert row.delivered_at is not None and row.body_size == len(got.body)

    def test_bytes_are_sent_as_given_and_every_rotating_secret_signs(self, opened, receiver):
        body = b"\x00raw bytes\xff"
        delivery = opened.hook.send(
            receiver.url(), body, event="blob", secret=["old-secret", "new-secret"]
        )
        assert opened.settle(delivery.id).ok
        (got,) = receiver.wait_for(1)
        assert got.body == body
        assert got.headers["Content-Type"] == "application/octet-stream"
        assert got.headers["Webhook-Signature"].split() == [
            *independent_signature("old-secret", got.headers, body).split(),
            *independent_signature("new-secret", got.headers, body).split(),
        ]
        verify(got.headers, got.body, "new-secret")  # a receiver that already rotated

    def test_retries_follow_the_policy_against_a_receiver_that_fails_twice(
        self, make_hook, receiver, variant
    ):
        opened = make_hook(variant, max_retries=3)
        opened.hook.configure(retry=flat_policy(0.3))
        receiver.script = [500, 503]
        delivery = opened.hook.send(receiver.url(), {"n": 1}, event="e", secret=SECRET)
        settled = opened.settle(delivery.id)
        got = receiver.wait_for(3)
        assert len(got) == 3 and settled.status == "succeeded" and settled.attempts == 3
        first_gap, second_gap = got[1].at - got[0].at, got[2].at - got[1].at
        # The policy: 0.3 s before the first retry, x2 before the second; no jitter. Only
        # lower bounds are exact (a loaded machine delays a retry, never hastens it), so
        # the doubling shows as the second gap's floor, not as a comparison of the two.
        assert 0.3 - 0.05 <= first_gap < 0.3 + 5
        assert 0.6 - 0.05 <= second_gap < 0.6 + 5
        for each in got:  # every attempt is signed afresh, the id stays
            assert each.headers["Webhook-Id"] == delivery.id
            assert each.headers["Webhook-Signature"] == independent_signature(
                SECRET, each.headers, each.body
            )
        time.sleep(0.3)
        assert len(receiver.requests) == 3

    def test_exhausted_retries_are_recorded_as_failed(self, make_hook, receiver, variant):
        opened = make_hook(variant, max_retries=1)
        opened.hook.configure(retry=flat_policy(0.05))
        receiver.default = 500
        delivery = opened.hook.send(receiver.url(), {"n": 1}, event="e", secret=SECRET)
        settled = opened.settle(delivery.id)
        assert (settled.status, settled.attempts, settled.response_status) == ("failed", 2, 500)
        assert settled.error == "HTTP 500"
        time.sleep(0.3)
        assert len(receiver.requests) == 2

    @pytest.mark.parametrize("status", [400, 404, 410])
    def test_client_errors_are_not_retried(self, make_hook, receiver, variant, status):
        opened = make_hook(variant, max_retries=3)
        opened.hook.configure(retry=flat_policy(0.05))
        receiver.script = [status]
        delivery = opened.hook.send(receiver.url(), {}, event="e", secret=SECRET)
        assert opened.settle(delivery.id).attempts == 1
        time.sleep(0.3)
        assert len(receiver.requests) == 1

    def test_a_redirect_is_not_followed(self, make_hook, receiver, variant):
        opened = make_hook(variant, max_retries=2)
        receiver.script = [302]
        delivery = opened.hook.send(receiver.url(), {}, event="e", secret=SECRET)
        settled = opened.settle(delivery.id)
        assert settled.status == "failed" and settled.attempts == 1
        assert "redirects are not followed" in settled.error
        time.sleep(0.3)
        assert len(receiver.requests) == 1

    def test_a_localhost_target_is_refused_without_the_option(self, make_hook, receiver, variant):
        opened = make_hook(variant, allow_private_targets=False)
        for url in (receiver.url(host="localhost"), receiver.url(host="127.0.0.1")):
            with pytest.raises(TargetRefusedError) as info:
                opened.hook.send(url, {}, event="e", secret=SECRET)
            assert "allow_private_targets" in str(info.value)
            assert str(receiver.port) not in str(info.value)
        with pytest.raises(TargetRefusedError, match="https"):
            opened.hook.send("http://hooks.example.com/x", {}, event="e", secret=SECRET)
        time.sleep(0.5)
        assert receiver.requests == []
        rows = WebhookDelivery.objects.using(opened.hook.database.alias)
        assert not rows.exists()

    def test_a_name_resolving_to_loopback_is_refused_when_connecting(
        self, make_hook, receiver, variant
    ):
        name = socket.gethostname()  # /etc/hosts maps it to 127.0.0.1 on this machine
        assert {info[4][0] for info in socket.getaddrinfo(name, 80)} <= {"127.0.0.1", "::1"}
        opened = make_hook(variant, allow_private_targets=False)
        # https passes the literal checks; the name is refused once resolved.
        target = f"https://{name}:{receiver.port}/hook"
        if opened.queued:
            delivery = opened.hook.send(target, {}, event="e", secret=SECRET)
            settled = opened.settle(delivery.id)
            assert settled.status == "failed" and settled.attempts == 1
            assert "allow_private_targets" in settled.error
        else:
            with pytest.raises(TargetRefusedError, match="allow_private_targets"):
                opened.hook.send(target, {}, event="e", secret=SECRET)
        time.sleep(0.5)
        assert receiver.requests == []

    def test_the_secret_is_never_logged_recorded_or_shown(
        self, make_hook, receiver, variant, caplog
    ):
        caplog.set_level(logging.DEBUG)
        opened = make_hook(variant, max_retries=1)
        opened.hook.configure(retry=flat_policy(0.05))
        receiver.script = [500, 200, 500, 500]
        first = opened.hook.send(receiver.url(), {"a": 1}, event="e", secret=SECRET)
        second = opened.hook.send(receiver.url(), {"a": 2}, event="e", secret=SECRET)
        settled = [opened.settle(first.id), opened.settle(second.id)]
        assert {d.status for d in settled} <= {"succeeded", "failed"}
        assert "failed" in caplog.text  # the failures were logged...
        assert SECRET not in caplog.text  # ...without the secret
        for text in (repr(opened.hook), repr(first), repr(settled[0]), str(first)):
            assert SECRET not in text
        rows = WebhookDelivery.objects.using(opened.hook.database.alias).values()
        assert rows and all(SECRET not in json.dumps(row, default=str) for row in rows)


@pytest.fixture(params=VARIANTS)
def variant(request) -> str:
    return request.param

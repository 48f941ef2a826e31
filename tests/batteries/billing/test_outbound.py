"""Outbound rules (https only, no private targets) and secrets kept out of every log,
repr and error message."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from toolkit_batteries.billing import ProviderError, WebhookSignatureError
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import is_public

from .conftest import ALL_SECRETS
from .webhooks import sign, subscription_event

PROVIDERS = ("billing_a", "billing_b")


@pytest.mark.parametrize("variant", PROVIDERS)
def test_a_loopback_endpoint_is_refused_without_allow_private(make_billing, variant):
    with pytest.raises(InvalidOptionsError) as info:
        make_billing(variant, allow_private=False)
    assert 'option "endpoint"' in str(info.value) and "allow_private" in str(info.value)
    assert "127.0.0.1" not in str(info.value)


@pytest.mark.parametrize("variant", PROVIDERS)
def test_http_is_refused_without_allow_insecure(make_billing, variant):
    with pytest.raises(InvalidOptionsError) as info:
        make_billing(variant, allow_insecure=False)
    assert "allow_insecure" in str(info.value)


@pytest.mark.parametrize("variant", PROVIDERS)
def test_a_name_resolving_to_loopback_is_refused_when_connecting(make_billing, variant):
    host = socket.gethostname()
    addresses = {i[4][0] for i in socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)}
    assert addresses and not any(is_public(a) for a in addresses), "hostname must be local"
    probe = make_billing(variant)  # starts a fake on 127.0.0.1; reuse its port by name
    opened = make_billing(variant, endpoint=f"http://{host}:{probe.fake.port}", allow_private=False)
    with pytest.raises(InvalidOptionsError) as info:
        opened.billing.create_customer("ada@example.com")
    assert "allow_private" in str(info.value) and host not in str(info.value)
    assert probe.fake.seen == [] and opened.fake.seen == []


def test_sandbox_needs_a_test_mode_key(make_billing):
    with pytest.raises(InvalidOptionsError) as info:
        make_billing("billing_a", sandbox=True, secret_key="sk_live_0123456789")
    assert "sk_live" not in str(info.value)
    assert make_billing("billing_a", sandbox=True).billing.adapter_name == "billing_a"


def test_billing_b_sandbox_selects_the_sandbox_host(make_billing):
    opened = make_billing("billing_b", sandbox=True, endpoint="", allow_private=False)
    assert opened.billing.endpoint == "https://sandbox-api.paddle.com"
    live = make_billing("billing_b", endpoint="", allow_private=False)
    assert live.billing.endpoint == "https://api.paddle.com"


def test_a_missing_key_fails_the_open(make_billing):
    with pytest.raises(InvalidOptionsError) as info:
        make_billing("billing_a", secret_key="")
    assert 'option "secret_key"' in str(info.value)
    with pytest.raises(InvalidOptionsError) as info:
        make_billing("billing_b", api_key="")
    assert 'option "api_key"' in str(info.value)


def test_the_stub_says_it_holds_no_funds(make_billing, caplog):
    with caplog.at_level(logging.WARNING, logger="toolkit.billing"):
        make_billing("stub")
    assert any("holds no funds and verifies no webhook" in r.getMessage() for r in caplog.records)


def test_the_stub_without_auto_approve_leaves_subscriptions_pending(make_billing):
    opened = make_billing("stub", auto_approve=False)
    customer = opened.billing.create_customer("ada@example.com")
    sub = opened.billing.create_subscription(customer.id, "price_basic")
    assert sub.status.value == "incomplete"
    assert opened.billing.list_invoices(customer.id)[0].status == "open"
    approved = make_billing("stub", auto_approve=True)
    trial = approved.billing.create_subscription(customer.id, "price_basic", trial_days=7)
    assert trial.status.value == "trialing"


def test_no_secret_in_logs_reprs_or_errors(make_billing, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    for variant in PROVIDERS:
        opened = make_billing(variant)
        texts.append(repr(opened.billing))
        texts.append(repr(opened.container))
        texts.append(repr(opened.container.config))
        sub = opened.live_subscription()
        opened.billing.list_invoices(sub.customer_id)
        opened.billing.cancel_subscription(sub.id, idempotency_key="c1")
        now = int(time.time())
        body = subscription_event(variant, sub.id, sub.customer_id, "active", now)
        opened.billing.handle_webhook(body, sign(variant, body, now))
        bad_calls = (
            (opened.billing.handle_webhook, body, sign(variant, body, now, "whsec_bad")),
            (opened.billing.handle_webhook, body, sign(variant, body, now - 10_000)),
        )
        for method, *args in bad_calls:
            with pytest.raises(WebhookSignatureError) as info:
                method(*args)
            texts.append(str(info.value))
        with pytest.raises(InvalidOptionsError) as info:
            make_billing(variant, endpoint="http://user:pw@127.0.0.1:1")
        texts.append(str(info.value))
        wrong_key = "sk_test_wrongkey" if variant == "billing_a" else "pdl_wrong"
        field = "secret_key" if variant == "billing_a" else "api_key"
        wrong = make_billing(variant, **{field: wrong_key})
        with pytest.raises(ProviderError) as info:
            wrong.billing.create_customer("x@example.com")
        texts.append(str(info.value))
    captured = capsys.readouterr()
    texts += [r.getMessage() for r in caplog.records] + [captured.out, captured.err]
    texts += [caplog.text]
    blob = "\n".join(texts)
    assert "billing" in blob  # the scan saw real output
    for secret in (*ALL_SECRETS, "sk_test_wrongkey", "pdl_wrong"):
        assert secret not in blob


def test_config_show_redacts_the_billing_secrets(tmp_path):
    from tests.cli.conftest import base_env, run_toolkit

    from .conftest import PADDLE_WEBHOOK_SECRET, STRIPE_KEY, STRIPE_WEBHOOK_SECRET

    env = base_env(
        BILLING__DEFAULT__ADAPTER="stripe",
        BILLING__DEFAULT__SECRET_KEY=STRIPE_KEY,
        BILLING__DEFAULT__WEBHOOK_SECRET=STRIPE_WEBHOOK_SECRET,
        BILLING__PADDLE__ADAPTER="paddle",
        BILLING__PADDLE__WEBHOOK_SECRET=PADDLE_WEBHOOK_SECRET,
    )
    text = run_toolkit("config", "show", "--service", "billing", cwd=tmp_path, env=env)
    js = run_toolkit("config", "show", "--service", "billing", "--json", cwd=tmp_path, env=env)
    assert text.returncode == 0 and js.returncode == 0, (text, js)
    data = js.json["data"]["billing"]
    assert data["default"]["adapter"] == "stripe"
    assert data["default"]["options"]["secret_key"] == "[redacted]"
    assert data["paddle"]["options"]["webhook_secret"] == "[redacted]"
    for output in (text.stdout, text.stderr, js.stdout, js.stderr):
        for secret in (STRIPE_KEY, STRIPE_WEBHOOK_SECRET, PADDLE_WEBHOOK_SECRET):
            assert secret not in output

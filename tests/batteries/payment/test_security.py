"""Outbound rules (https, no private targets), secrets kept out of logs and reprs,
the state machine table and the system checks."""

from __future__ import annotations

import logging
import socket

import pytest

from tests.support.batteries import empty_sqlite, refused_without_tables
from tests.support.leaks import config_show
from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.payment import IllegalTransitionError, PaymentState
from toolkit_batteries.payment.states import FINAL_STATES, TRANSITIONS, check_transition

from .conftest import ALL_SECRETS, KEYS, WEBHOOK_SECRETS, options_for
from .servers import ProviderA, ProviderB

PROVIDERS = {"payment_a": ProviderA, "payment_b": ProviderB}


@pytest.fixture(params=sorted(PROVIDERS))
def provider(request):
    server = PROVIDERS[request.param](KEYS[request.param]).start()
    yield request.param, server
    server.stop()


def _open(variant, options, sqlite_dsn):
    settings = {
        "db": {"adapter": "sqlfile", "options": {"dsn": sqlite_dsn}},
        "payment": {"adapter": variant, "options": options},
    }
    container = Container(Config.load(settings, {}))
    return container


def test_a_loopback_endpoint_needs_allow_private(provider, sqlite_dsn):
    variant, server = provider
    container = _open(variant, options_for(variant, server, allow_private=False), sqlite_dsn)
    try:
        with pytest.raises(InvalidOptionsError, match="allow_private") as caught:
            container.payment()
        assert server.url not in str(caught.value)
    finally:
        container.close()
    assert server.seen == []


def test_http_needs_allow_insecure(provider, sqlite_dsn):
    variant, server = provider
    container = _open(variant, options_for(variant, server, allow_insecure=False), sqlite_dsn)
    try:
        with pytest.raises(InvalidOptionsError, match="https"):
            container.payment()
    finally:
        container.close()
    assert server.seen == []


def test_a_name_resolving_to_loopback_is_refused_after_dns(provider, sqlite_dsn, monkeypatch):
    """A public-looking name whose DNS answer is 127.0.0.1 (rebinding) is refused at connect."""
    variant, server = provider
    real = socket.getaddrinfo

    def fake(host, *args, **kwargs):
        if host == "pay.example.com":
            return real("127.0.0.1", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    endpoint = f"http://pay.example.com:{server.port}"
    options = options_for(variant, server, endpoint=endpoint, allow_private=False)
    container = _open(variant, options, sqlite_dsn)
    try:
        payment = container.payment()  # the name looks public: the open passes
        with pytest.raises(InvalidOptionsError, match="resolves to a private") as caught:
            payment.create(1000, "usd")
        assert "pay.example.com" not in str(caught.value)
        assert payment._rows().count() == 0
    finally:
        container.close()
    assert server.seen == []  # refused before connecting
    allowed = _open(variant, options_for(variant, server, endpoint=endpoint), sqlite_dsn)
    try:
        assert allowed.payment().create(1000, "usd").provider_id
    finally:
        allowed.close()
    assert len(server.seen) == 1


def test_no_key_or_secret_in_logs_reprs_or_redacted_config(make_payment, caplog):
    with caplog.at_level(logging.DEBUG):
        shown = []
        for variant in ("payment_a", "payment_b"):
            opened = make_payment(variant)
            record = opened.pay(opened.payment.create(2000, "usd"))
            opened.payment.refund(record.id, 500, idempotency_key="k1")
            body, headers = opened.signed(opened.event(record, "succeeded"), secret="whsec_wrong")
            with pytest.raises(Exception) as caught:
                opened.payment.handle_webhook(body, headers)
            shown += [
                repr(opened.payment),
                str(caught.value),
                repr(record),
                repr(opened.payment.refunds(record.id)),
                str(vars(record)),
            ]
            shown.append(str(opened.container.config.redacted_services()))
        logging.getLogger("toolkit.payment").debug("end")
    text = caplog.text + "\n".join(shown)
    assert "end" in caplog.text
    for secret in ALL_SECRETS:
        assert secret not in text


def test_missing_keys_fail_the_open_naming_the_field(sqlite_dsn):
    for variant, field in (("payment_a", "secret_key"), ("payment_b", "api_key")):
        container = _open(variant, {}, sqlite_dsn)
        try:
            with pytest.raises(InvalidOptionsError, match=f'"{field}" is required'):
                container.payment()
        finally:
            container.close()


# ------------------------------------------------------------------ the state machine


def test_transition_table():
    S = PaymentState
    assert {S.CANCELED, S.REFUNDED} == FINAL_STATES
    assert check_transition(S.PENDING, S.SUCCEEDED) is True
    assert check_transition(S.SUCCEEDED, S.SUCCEEDED) is False  # a replayed event
    assert check_transition(S.PARTIALLY_REFUNDED, S.PARTIALLY_REFUNDED) is True
    assert check_transition(S.FAILED, S.SUCCEEDED) is True  # the customer retried
    illegal = [
        (S.PENDING, S.REFUNDED),
        (S.SUCCEEDED, S.CANCELED),
        (S.REFUNDED, S.SUCCEEDED),
        (S.CANCELED, S.PENDING),
        (S.AUTHORIZED, S.PENDING),
        (S.SUCCEEDED, S.FAILED),
    ]
    for current, target in illegal:
        with pytest.raises(IllegalTransitionError) as caught:
            check_transition(current, target, instance="eu", payment_id="p1")
        assert f"from {current} to {target}" in str(caught.value)
        assert "payment.eu" in str(caught.value)
    assert set(TRANSITIONS) == set(S)


# ------------------------------------------------------------------ checks


def _ids(block):
    return sorted(m.id for m in service_checks("payment", Config.load({"payment": block}, {})))


def test_checks():
    assert _ids({"adapter": "stub"}) == []
    assert _ids({"adapter": "payment_a"}) == ["toolkit_payment.E002", "toolkit_payment.W001"]
    assert _ids(
        {
            "adapter": "payment_b",
            "options": {
                "api_key": "k",
                "webhook_secret": "w",
                "endpoint": "http://10.0.0.1",
                "auto_approve": True,
            },
        }
    ) == ["toolkit_payment.E003", "toolkit_payment.W002"]
    good = {"adapter": "stripe", "options": {"secret_key": "k", "webhook_secret": "w"}}
    assert _ids(good) == []
    messages = service_checks(
        "payment",
        Config.load(
            {
                "payment": {
                    "adapter": "payment_b",
                    "options": {
                        "api_key": "pdl_live_secret_value",
                        "endpoint": "http://user:pw@x.example",
                    },
                }
            },
            {},
        ),
    )
    assert all("pdl_live_secret_value" not in m.msg for m in messages)


def test_config_show_never_prints_keys_or_webhook_secrets(tmp_path):
    from tests.cli.conftest import base_env

    env = base_env(
        PAYMENT__DEFAULT__ADAPTER="payment_a",
        PAYMENT__DEFAULT__SECRET_KEY=KEYS["payment_a"],
        PAYMENT__DEFAULT__WEBHOOK_SECRET=WEBHOOK_SECRETS["payment_a"],
        PAYMENT__EU__ADAPTER="paddle",
        PAYMENT__EU__API_KEY=KEYS["payment_b"],
        PAYMENT__EU__WEBHOOK_SECRET=WEBHOOK_SECRETS["payment_b"],
    )
    text, js, options = config_show("payment", env, tmp_path)
    assert options["secret_key"] == "[redacted]" and options["webhook_secret"] == "[redacted]"
    assert js.json["data"]["payment"]["eu"]["options"]["api_key"] == "[redacted]"
    for output in (text.stdout, text.stderr, js.stdout, js.stderr):
        for secret in ALL_SECRETS:
            assert secret not in output


def test_the_open_runs_no_ddl_and_names_migrate(tmp_path):
    path = empty_sqlite(tmp_path)
    refused_without_tables(_open("stub", {}, str(path)), "payment", path)

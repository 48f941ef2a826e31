"""What only the remotecfg adapter has: the wire format, the TTL, stale serving, outbound rules."""

from __future__ import annotations

import json
import logging
import os
import socket

import pytest

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError

from ..cache.helpers import FakeClock
from .conftest import FLAGS, remote_block
from .server import PROJECT, FakeRemoteConfig, template_of

TEMPLATE = f"/v1/projects/{PROJECT}/namespaces/firebase-server/serverRemoteConfig"


def open_flag(server, tmp_path, **options):
    container = Container(Config.load({"flag": remote_block(server, tmp_path, **options)}, {}))
    flag = container.flag()
    flag.clock = FakeClock()
    return container, flag


def test_the_token_is_a_signed_jwt_grant_and_is_reused(remote, tmp_path):
    container, flag = open_flag(remote, tmp_path, ttl="10s")
    assert flag.enabled("on") is True
    assert remote.requests["/token"] == 1 and remote.requests[TEMPLATE] == 1
    flag.clock.advance(11)
    assert flag.enabled("on") is True
    assert remote.requests["/token"] == 1 and remote.requests[TEMPLATE] == 2
    container.close()


def test_the_template_is_cached_for_the_ttl(remote, tmp_path):
    container, flag = open_flag(remote, tmp_path, ttl="30s")
    assert flag.value("theme") == "dark"
    remote.template = template_of({**FLAGS, "theme": {"value": "blue"}}, version="2")
    flag.clock.advance(29)
    assert flag.value("theme") == "dark" and remote.requests[TEMPLATE] == 1
    flag.clock.advance(2)
    assert flag.value("theme") == "blue" and remote.requests[TEMPLATE] == 2
    container.close()


def test_stale_template_is_served_during_an_outage(remote, tmp_path, caplog):
    container, flag = open_flag(remote, tmp_path, ttl="5s", timeout="1s")
    assert flag.value("theme", tenant="acme") == "light"
    remote.stop()
    flag.clock.advance(6)
    with caplog.at_level(logging.WARNING, logger="toolkit.flag"):
        assert flag.value("theme", tenant="acme") == "light"
        assert flag.enabled("on") is True
    assert flag.stale is True
    assert "unreachable" in caplog.text and "serving the template fetched 6 s ago" in caplog.text
    # One attempt per TTL, not one per evaluation.
    assert caplog.text.count("unreachable") == 1
    with pytest.raises(ServiceUnavailableError, match=r"flag\.default: unavailable"):
        flag.ping()
    container.close()


def test_the_service_coming_back_ends_the_stale_period(remote, tmp_path):
    container, flag = open_flag(remote, tmp_path, ttl="5s")
    assert flag.value("theme") == "dark"
    remote.status = 503
    flag.clock.advance(6)
    assert flag.value("theme") == "dark" and flag.stale
    remote.status = None
    remote.template = template_of({**FLAGS, "theme": {"value": "green"}}, version="3")
    flag.clock.advance(6)
    assert flag.value("theme") == "green" and not flag.stale
    flag.ping()
    container.close()


def test_never_reached_means_defaults_and_a_failing_ping(tmp_path, caplog):
    server = FakeRemoteConfig()
    server.start()
    container = Container(Config.load({"flag": remote_block(server, tmp_path)}, {}))
    server.stop()
    flag = container.flag()
    with caplog.at_level(logging.ERROR, logger="toolkit.flag"):
        assert flag.enabled("on", default=True) is True
        assert flag.enabled("on") is False
    assert "no template was ever fetched" in caplog.text
    with pytest.raises(ServiceUnavailableError):
        flag.ping()
    container.close()


def test_an_expired_token_is_replaced(remote, tmp_path):
    container, flag = open_flag(remote, tmp_path, ttl="5s")
    assert flag.enabled("on")
    remote.tokens.clear()  # the server forgot every token it issued
    flag.clock.advance(6)
    assert flag.enabled("on") and flag.stale  # a 401: stale for one TTL
    flag.clock.advance(6)
    assert flag.enabled("on") and not flag.stale
    assert remote.requests["/token"] == 2
    container.close()


def test_custom_signal_operators(remote, tmp_path):
    remote.template = {
        "conditions": [
            {
                "name": "staff",
                "condition": {
                    "customSignal": {
                        "customSignalOperator": "STRING_CONTAINS_REGEX",
                        "customSignalKey": "subject",
                        "targetCustomSignalValues": ["^staff-"],
                    }
                },
            },
            {
                "name": "big_ids",
                "condition": {
                    "andCondition": {
                        "conditions": [
                            {
                                "customSignal": {
                                    "customSignalOperator": "NUMERIC_GREATER_EQUAL",
                                    "customSignalKey": "subject",
                                    "targetCustomSignalValues": ["1000"],
                                }
                            },
                            {"true": {}},
                        ]
                    }
                },
            },
        ],
        "parameters": {
            "tools": {
                "defaultValue": {"value": "false"},
                "conditionalValues": {"staff": {"value": "true"}},
                "valueType": "BOOLEAN",
            },
            "tier": {
                "defaultValue": {"value": "small"},
                "conditionalValues": {"big_ids": {"value": "big"}},
                "valueType": "STRING",
            },
            "config": {"defaultValue": {"value": '{"a": [1, 2]}'}, "valueType": "JSON"},
            "deferred": {"defaultValue": {"useInAppDefault": True}},
        },
    }
    container, flag = open_flag(remote, tmp_path)
    assert flag.enabled("tools", subject="staff-ann") and not flag.enabled("tools", subject="bob")
    assert flag.value("tier", subject=1500) == "big" and flag.value("tier", subject=5) == "small"
    assert flag.value("config") == {"a": [1, 2]}
    assert flag.value("deferred", default="mine") == "mine"
    assert flag.enabled("deferred", default=True) is True
    container.close()


# ---------------------------------------------------------------------- outbound rules


def config_error(server, tmp_path, **options) -> InvalidOptionsError:
    block = remote_block(server, tmp_path, **options)
    with pytest.raises(InvalidOptionsError) as caught:
        Container(Config.load({"flag": block}, {})).flag()
    return caught.value


def test_http_needs_allow_insecure(remote, tmp_path):
    error = config_error(remote, tmp_path, allow_insecure=False)
    assert 'flag.default: option "remotecfg.endpoint" must use https' in str(error)
    assert remote.url not in str(error)


def test_a_loopback_literal_needs_allow_private(remote, tmp_path):
    error = config_error(remote, tmp_path, allow_private=False)
    assert 'option "remotecfg.endpoint" points at a non-public host' in str(error)


def test_an_http_token_uri_needs_allow_insecure(remote, tmp_path):
    block = remote_block(remote, tmp_path, endpoint="https://example.com", allow_insecure=False)
    with pytest.raises(InvalidOptionsError, match=r'option "remotecfg.service_account" must use'):
        Container(Config.load({"flag": block}, {})).flag()


def test_a_name_resolving_to_loopback_is_refused_at_connect_time(remote, tmp_path, caplog):
    host = socket.gethostname()
    addresses = {i[4][0] for i in socket.getaddrinfo(host, remote.port, type=socket.SOCK_STREAM)}
    if not addresses <= {"127.0.0.1", "::1", "127.0.1.1"}:
        pytest.fail(f"this test needs the host name to resolve to loopback, got {addresses}")
    block = remote_block(remote, tmp_path, endpoint=f"http://{host}:{remote.port}")
    account = remote.write_account(tmp_path, token_uri=f"http://{host}:{remote.port}/token")
    block["options"]["remotecfg"].update(allow_private=False, service_account=str(account))
    container = Container(Config.load({"flag": block}, {}))
    flag = container.flag()
    with caplog.at_level(logging.ERROR, logger="toolkit.flag"):
        assert flag.enabled("on") is False
    assert sum(remote.requests.values()) == 0
    assert "connection failed" in caplog.text
    container.close()


def test_required_options(tmp_path):
    block = {"adapter": "remotecfg", "options": {"remotecfg": {}}}
    with pytest.raises(InvalidOptionsError, match=r'"remotecfg.service_account" is required'):
        Container(Config.load({"flag": block}, {})).flag()
    path = tmp_path / "sa.json"
    path.write_text(json.dumps({"client_email": "a@b", "private_key": "x"}), encoding="utf-8")
    block["options"]["remotecfg"]["service_account"] = str(path)
    with pytest.raises(InvalidOptionsError, match=r'"remotecfg.project_id" is required'):
        Container(Config.load({"flag": block}, {})).flag()


def test_checks(tmp_path, remote):
    block = {
        "adapter": "remotecfg",
        "options": {"remotecfg": {"endpoint": "http://10.0.0.1", "ttl": "0s", "timeout": "-1s"}},
    }
    ids = sorted(m.id for m in service_checks("flag", Config.load({"flag": block}, {})))
    assert ids == ["toolkit_flag.E003", "toolkit_flag.E004", "toolkit_flag.E005"]
    good = remote_block(remote, tmp_path)
    os.chmod(tmp_path / "service-account.json", 0o644)
    ids = [m.id for m in service_checks("flag", Config.load({"flag": good}, {}))]
    assert ids == ["toolkit_flag.W001"]


# ---------------------------------------------------------------------- secrets


def test_no_key_or_token_in_logs_errors_or_reprs(remote, tmp_path, caplog):
    with caplog.at_level(logging.DEBUG):
        container, flag = open_flag(remote, tmp_path, ttl="1s", timeout="1s")
        assert flag.enabled("on")
        tokens = set(remote.tokens)
        remote.status = 403
        flag.clock.advance(2)
        flag.enabled("on")
        remote.stop()
        flag.clock.advance(2)
        flag.enabled("on")
        with pytest.raises(ServiceUnavailableError) as caught:
            flag.refresh()
        shown = "\n".join(
            [
                caplog.text,
                str(caught.value),
                repr(flag),
                repr(flag._tokens.account),
                repr(container.config.service("flag", "default").options),
            ]
        )
    key_body = "".join(remote.key_pem.splitlines()[1:-1])
    assert tokens
    for secret in [*tokens, key_body[:40], key_body[-40:]]:
        assert secret not in shown
    assert "HTTP 403" in caplog.text
    container.close()


def test_https_verifies_the_certificate(remote, tmp_path, caplog):
    """The guarded transport keeps TLS verification: a self-signed server is refused."""
    import ssl

    from tests.certs import self_signed

    cert, key = self_signed(tmp_path, ("127.0.0.1",))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    tls = FakeRemoteConfig()
    tls._server.socket = context.wrap_socket(tls._server.socket, server_side=True)
    tls.start()
    try:
        host, port = tls._server.server_address[:2]
        block = remote_block(tls, tmp_path, endpoint=f"https://{host}:{port}")
        tls.write_account(tmp_path, token_uri=f"https://{host}:{port}/token")
        container = Container(Config.load({"flag": block}, {}))
        with caplog.at_level(logging.ERROR, logger="toolkit.flag"):
            assert container.flag().enabled("on") is False
        assert "connection failed: ConnectError" in caplog.text
        assert sum(tls.requests.values()) == 0
        with pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):
            container.flag()._fetch()
        container.close()
    finally:
        tls.stop()

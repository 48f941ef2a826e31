"""What only the push adapter has: the token exchange, the HTTP v1 wire format, errors, SSRF."""

from __future__ import annotations

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.loading import resolve_adapter
from toolkit_batteries.core.outbound.service_account import ServiceAccount
from toolkit_batteries.notification import (
    DeliveryRefusedError,
    InvalidNotificationError,
    NotificationUnavailableError,
)
from toolkit_batteries.notification.adapters.fcm import FCMPush

from ..cache.helpers import FakeClock
from .conftest import DEVICE, open_block, push_block
from .servers import EMAIL, GRANT, KEY_ID, PROJECT, SCOPE

SEND = f"/v1/projects/{PROJECT}/messages:send"


def open_push(server, tmp_path, **push):
    container, push_ = open_block(push_block(server, tmp_path, **push))
    return container, push_


def test_a_signed_jwt_is_exchanged_then_the_message_is_posted(push_server, tmp_path):
    container, push = open_push(push_server, tmp_path)
    receipt = push.send(DEVICE, "Your order shipped", title="Orders", data={"order": "A-17"})
    token_request, send_request = push_server.seen
    # The token exchange: a form with the JWT-bearer grant and an RS256 assertion that the
    # server verified with the account's public key (it answered 200, so it did).
    assert (token_request.method, token_request.path) == ("POST", "/token")
    form = token_request.form()
    assert form["grant_type"] == [GRANT]
    assertion = form["assertion"][0]
    assert jwt.get_unverified_header(assertion) == {"alg": "RS256", "kid": KEY_ID, "typ": "JWT"}
    claims = jwt.decode(
        assertion,
        push_server.key.public_key(),
        algorithms=["RS256"],
        audience=f"{push_server.url}/token",
    )
    assert claims["iss"] == EMAIL and claims["scope"] == SCOPE
    assert claims["exp"] - claims["iat"] == 3600
    # The send: HTTP v1 with the issued bearer token and the message as JSON.
    assert (send_request.method, send_request.path) == ("POST", SEND)
    bearer = send_request.headers["authorization"]
    assert bearer.startswith("Bearer ya29.") and bearer[7:] in push_server.tokens
    assert send_request.headers["content-type"] == "application/json"
    assert send_request.json() == {
        "message": {
            "token": DEVICE,
            "notification": {"title": "Orders", "body": "Your order shipped"},
            "data": {"order": "A-17"},
        }
    }
    assert receipt.id == f"projects/{PROJECT}/messages/0:1%31bd1c9631bd1c96"
    assert (receipt.adapter, receipt.status) == ("push", "accepted")
    container.close()


def test_a_topic_recipient_is_sent_as_a_topic(push_server, tmp_path):
    container, push = open_push(push_server, tmp_path)
    push.send("topic:news.eu-west_1", "Hello subscribers")
    assert push_server.seen[-1].json() == {
        "message": {"topic": "news.eu-west_1", "notification": {"body": "Hello subscribers"}}
    }
    with pytest.raises(InvalidNotificationError, match="topic"):
        push.send("topic:bad/topic", "x")
    with pytest.raises(InvalidNotificationError, match="topic"):
        push.send("topic:", "x")
    assert push_server.paths().count(SEND) == 1
    container.close()


def test_the_token_is_reused_until_a_minute_before_it_expires(push_server, tmp_path):
    push_server.expires_in = 600
    container, push = open_push(push_server, tmp_path)
    # Real time minus ten minutes: the server checks the assertion's iat/exp against now.
    push.clock = clock = FakeClock(time.time() - 600)
    push.send(DEVICE, "one")
    clock.advance(500)
    push.send(DEVICE, "two")
    assert push_server.paths().count("/token") == 1
    clock.advance(45)  # 545 s: past 600 - 60
    push.send(DEVICE, "three")
    assert push_server.paths() == ["/token", SEND, SEND, "/token", SEND]
    container.close()


def test_a_401_fetches_a_new_token_once_and_resends(push_server, tmp_path):
    container, push = open_push(push_server, tmp_path)
    push.send(DEVICE, "one")
    push_server.revoke_all()
    push.send(DEVICE, "two")
    assert push_server.paths() == ["/token", SEND, SEND, "/token", SEND]
    container.close()


def test_a_401_after_a_fresh_token_is_refused(push_server, tmp_path):
    container, push = open_push(push_server, tmp_path)
    push_server.force = (401, {"error": {"code": 401, "status": "UNAUTHENTICATED"}})
    with pytest.raises(DeliveryRefusedError) as caught:
        push.send(DEVICE, "one")
    assert caught.value.status == 401 and "push.service_account" in str(caught.value)
    container.close()


def test_an_unregistered_device_is_refused_with_the_error_code(push_server, tmp_path):
    push_server.unregistered.add(DEVICE)
    container, push = open_push(push_server, tmp_path)
    with pytest.raises(DeliveryRefusedError) as caught:
        push.send(DEVICE, "hello")
    error = caught.value
    assert (error.status, error.provider_code) == (404, "UNREGISTERED")
    assert "HTTP 404, code UNREGISTERED" in str(error) and DEVICE not in str(error)
    container.close()


@pytest.mark.parametrize("status", [429, 500, 503])
def test_throttling_and_server_errors_are_unavailable(push_server, tmp_path, status):
    container, push = open_push(push_server, tmp_path)
    push.ping()  # a token first, then every send answers the forced status
    push_server.force = (
        status,
        {"error": {"code": status, "status": "UNAVAILABLE", "message": "try later"}},
    )
    with pytest.raises(NotificationUnavailableError, match=f"HTTP {status}"):
        push.send(DEVICE, "hello")
    container.close()


def test_a_key_the_service_does_not_know_fails_the_token_exchange(push_server, tmp_path):
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    account = push_server.write_account(tmp_path, key=other)
    container, push = open_push(push_server, tmp_path, service_account=str(account))
    with pytest.raises(DeliveryRefusedError) as caught:
        push.send(DEVICE, "hello")
    assert caught.value.provider_code == "invalid_grant"
    assert "push.service_account" in str(caught.value)
    assert push_server.paths() == ["/token"]
    with pytest.raises(NotificationUnavailableError, match="invalid_grant"):
        push.ping()
    container.close()


def test_a_stopped_service_is_unavailable(push_server, tmp_path):
    container, push = open_push(push_server, tmp_path)
    push_server.stop()
    with pytest.raises(NotificationUnavailableError, match="connection failed"):
        push.send(DEVICE, "hello")
    container.close()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "is required"),
        ("missing", "does not exist"),
        ("not json", "not JSON"),
        ({"client_email": EMAIL}, "private_key"),
    ],
)
def test_a_bad_service_account_fails_the_open(push_server, tmp_path, content, reason):
    path = tmp_path / "account.json"
    if isinstance(content, dict):
        path.write_text(json.dumps(content))
    elif content == "not json":
        path.write_text("{{{")
    value = "" if content is None else str(path)
    block = push_block(push_server, tmp_path)
    block["options"]["push"]["service_account"] = value
    with pytest.raises(InvalidOptionsError, match=reason) as caught:
        open_block(block)
    assert caught.value.field == "push.service_account"
    assert push_server.seen == []


def test_the_project_comes_from_the_option_before_the_key_file(push_server, tmp_path):
    container, push = open_push(push_server, tmp_path, project_id="other project")
    assert push._url.endswith("/v1/projects/other%20project/messages:send")
    container.close()


def test_a_project_is_required_when_the_key_file_names_none(push_server, tmp_path):
    path = tmp_path / "account.json"
    path.write_text(json.dumps({"client_email": EMAIL, "private_key": "unused"}))
    block = push_block(push_server, tmp_path)
    block["options"]["push"]["service_account"] = str(path)
    with pytest.raises(
        InvalidOptionsError, match=r"or a project_id in the service-account"
    ) as caught:
        open_block(block)
    assert (caught.value.service, caught.value.field) == ("notification", "push.project_id")
    assert push_server.seen == []


def test_the_vendor_alias_opens_the_push_adapter(push_server, tmp_path):
    assert resolve_adapter("notification", "fcm") == ("push", FCMPush)
    container, push = open_block({**push_block(push_server, tmp_path), "adapter": "fcm"})
    push.send(DEVICE, "hello")
    assert push_server.paths() == ["/token", SEND]
    container.close()


def test_ping_obtains_a_token(push_server, tmp_path):
    container, push = open_push(push_server, tmp_path)
    push.ping()
    push.ping()
    assert push_server.paths() == ["/token"]
    container.close()


# ---------------------------------------------------------------------- outbound rules


def test_a_loopback_endpoint_is_refused_at_open_without_allow_private(push_server, tmp_path):
    block = push_block(push_server, tmp_path, relaxed=False)
    block["options"]["allow_insecure"] = True
    with pytest.raises(InvalidOptionsError) as caught:
        open_block(block)
    assert caught.value.field == "push.endpoint" and "allow_private" in str(caught.value)
    assert push_server.seen == []


def test_a_loopback_token_uri_is_refused_at_open(push_server, tmp_path):
    account = push_server.write_account(tmp_path)
    block = push_block(push_server, tmp_path, relaxed=False, service_account=str(account))
    block["options"]["allow_insecure"] = True
    block["options"]["push"]["endpoint"] = "http://push.example.com"
    with pytest.raises(InvalidOptionsError) as caught:
        open_block(block)
    assert caught.value.field == "push.service_account"
    assert push_server.seen == []


def test_an_http_token_uri_is_refused_without_allow_insecure(push_server, tmp_path):
    account = push_server.write_account(tmp_path, token_uri="http://oauth.example.com/token")
    block = push_block(push_server, tmp_path, relaxed=False, service_account=str(account))
    block["options"]["push"]["endpoint"] = "https://push.example.com"
    with pytest.raises(InvalidOptionsError) as caught:
        open_block(block)
    assert caught.value.field == "push.service_account" and "allow_insecure" in str(caught.value)


def test_the_connection_is_refused_when_the_address_is_private(push_server, tmp_path):
    account = ServiceAccount(
        str(push_server.write_account(tmp_path)),
        service="notification",
        field="push.service_account",
        instance="default",
    )
    account.token_uri = account.token_uri.replace("127.0.0.1", "localhost")
    push = FCMPush(
        account=account,
        project_id=PROJECT,
        endpoint=push_server.url.replace("127.0.0.1", "localhost"),
        timeout=5,
        allow_insecure=True,
        allow_private=False,
    )
    with pytest.raises(InvalidOptionsError) as caught:
        push.send(DEVICE, "hello")
    assert "allow_private" in str(caught.value)
    assert push_server.seen == []
    push.close()


def test_a_stalled_service_times_out_within_the_timeout(push_server, tmp_path):
    block = push_block(push_server, tmp_path)
    block["options"]["timeout"] = "1s"
    container, push = open_block(block)
    push.ping()
    push_server.delay = 3
    started = time.monotonic()
    with pytest.raises(NotificationUnavailableError, match="timed out"):
        push.send(DEVICE, "hello")
    assert time.monotonic() - started < 2.5
    container.close()

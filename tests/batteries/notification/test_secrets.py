"""No auth token, private key, JWT assertion or access token in a log line, an error, a repr
or ``toolkit config show``.

The sms and push adapters are driven through their normal and failing paths with every
logger at DEBUG (the provider SDK's ``twilio.http_client``, requests, urllib3, httpx and
httpcore included); everything a person could read is gathered and scanned.
"""

from __future__ import annotations

import logging

from tests.cli.conftest import base_env, run_toolkit
from tests.support.leaks import assert_never_shown, failing_texts, log_texts
from toolkit_batteries.core.config import Config

from .conftest import DEVICE, PHONE, open_block, push_block, sms_block
from .servers import AUTH_TOKEN, FakePushService, FakeSMSProvider


def test_sms_never_shows_the_auth_token(caplog):
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    with FakeSMSProvider() as server:
        block = sms_block(server)
        container, sms = open_block(block)
        sms.send(PHONE, "hello")
        sms.ping()
        server.refuse.add("+14155550000")
        texts += failing_texts(lambda: sms.send("+14155550000", "hello"))
        server.force = (503, {"code": 20503, "status": 503})
        texts += failing_texts(lambda: sms.send(PHONE, "hello"))
        texts += failing_texts(lambda: sms.ping())
        server.force = None
        config = Config.load({"notification": block}, {})
        texts += [repr(sms), repr(sms.__dict__), repr(config)]
        texts += [repr(config.service("notification", "default").options)]
        container.close()
        wrong = sms_block(server, auth_token="another-token-Yy3-never-shown")
        container, sms = open_block(wrong)
        texts += failing_texts(lambda: sms.send(PHONE, "hello"))
        container.close()
    texts += failing_texts(lambda: open_block(sms_block(server, from_number="12345")))
    texts += log_texts(caplog)
    assert any(r.name.startswith("twilio") for r in caplog.records)  # the SDK's log captured
    assert any(r.name.startswith("urllib3") for r in caplog.records)
    assert_never_shown(texts, [AUTH_TOKEN, "another-token-Yy3-never-shown"])


def test_push_never_shows_the_key_the_assertion_or_a_token(caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    with FakePushService() as server:
        container, push = open_block(push_block(server, tmp_path))
        push.send(DEVICE, "hello", data={"order": "A-17"})
        server.revoke_all()
        push.send(DEVICE, "again")  # a 401, a second exchange, a resend
        server.unregistered.add(DEVICE)
        texts += failing_texts(lambda: push.send(DEVICE, "hello"))
        server.force = (503, {"error": {"code": 503, "status": "UNAVAILABLE"}})
        texts += failing_texts(lambda: push.send("other-device-token-123", "hello"))
        server.force = (400, {"error": "invalid_grant"})
        push._tokens.forget()
        texts += failing_texts(lambda: push.send("other-device-token-123", "hello"))
        texts += failing_texts(lambda: push.ping())
        texts += [repr(push), repr(push.__dict__), repr(push._tokens.account)]
        container.close()
        assertions = [
            s.form()["assertion"][0] for s in server.seen if s.path == "/token" and s.body
        ]
        issued = list(server.issued)
        pem_lines = [line for line in server.key_pem().splitlines() if "-----" not in line]
    texts += log_texts(caplog)
    assert len(issued) == 2 and len(assertions) >= 3
    assert any(r.name.startswith("httpx") or r.name.startswith("httpcore") for r in caplog.records)
    assert_never_shown(texts, [*issued, *assertions, *pem_lines[1:-1]])


def test_config_show_never_prints_the_auth_token(tmp_path):
    env = base_env(
        NOTIFICATION__DEFAULT__ADAPTER="sms",
        NOTIFICATION__DEFAULT__SMS__ACCOUNT_SID="AC5ef8732a3c49700934481addd5ce1659",
        NOTIFICATION__DEFAULT__SMS__AUTH_TOKEN=AUTH_TOKEN,
        NOTIFICATION__DEFAULT__SMS__FROM_NUMBER="+15005550006",
    )
    text = run_toolkit("config", "show", "--service", "notification", cwd=tmp_path, env=env)
    js = run_toolkit("config", "show", "--service", "notification", "--json", cwd=tmp_path, env=env)
    for ran in (text, js):
        assert ran.returncode == 0, ran.stderr
        assert "AC5ef8732a3c49700934481addd5ce1659" in ran.stdout  # the env was read
        assert AUTH_TOKEN not in ran.stdout and AUTH_TOKEN not in ran.stderr

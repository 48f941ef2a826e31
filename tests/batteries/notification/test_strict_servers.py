"""The SMS stand-in refuses what the real Messages API refuses, with its error codes.

So an adapter that leaves out ``From`` or ``Body``, or sends JSON, fails its own tests.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

from .servers import ACCOUNT_SID, AUTH_TOKEN, FROM_NUMBER, FakeSMSProvider

GOOD = {"To": "+15005550009", "From": FROM_NUMBER, "Body": "Your code is 123456"}


def send(url: str, body: bytes, content_type: str) -> tuple[int, dict]:
    basic = base64.b64encode(f"{ACCOUNT_SID}:{AUTH_TOKEN}".encode()).decode()
    request = urllib.request.Request(
        f"{url}/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json",
        data=body,
        method="POST",
        headers={"Authorization": f"Basic {basic}", "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


@pytest.mark.parametrize(("leave_out", "code"), [("To", 21604), ("From", 21603), ("Body", 21602)])
def test_a_message_without_a_required_field_is_refused(leave_out, code):
    form = {k: v for k, v in GOOD.items() if k != leave_out}
    with FakeSMSProvider() as server:
        status, answer = send(
            server.url, urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded"
        )
        assert (status, answer["code"]) == (400, code)


def test_a_json_body_and_an_overlong_body_are_refused():
    with FakeSMSProvider() as server:
        status, answer = send(server.url, json.dumps(GOOD).encode(), "application/json")
        assert (status, answer["code"]) == (400, 20001)
        long_text = urllib.parse.urlencode({**GOOD, "Body": "x" * 1601}).encode()
        status, answer = send(server.url, long_text, "application/x-www-form-urlencoded")
        assert (status, answer["code"]) == (400, 21617)
        good = urllib.parse.urlencode(GOOD).encode()
        assert send(server.url, good, "application/x-www-form-urlencoded")[0] == 201

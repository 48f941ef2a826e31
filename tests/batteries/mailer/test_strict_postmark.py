"""The Postmark stand-in refuses what Postmark refuses, so a malformed send fails its test."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from .postmark import PostmarkServer

TOKEN = "pm-strict-server-token-0123"
GOOD = {"From": "a@example.com", "To": "b@example.com", "Subject": "s", "TextBody": "hi"}


def post(server: PostmarkServer, body: bytes, content_type: str = "application/json") -> dict:
    request = urllib.request.Request(
        f"{server.url}email",
        data=body,
        method="POST",
        headers={"X-Postmark-Server-Token": TOKEN, "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return {"status": answer.status, **json.loads(answer.read())}
    except urllib.error.HTTPError as refused:
        return {"status": refused.code, **json.loads(refused.read())}


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {k: v for k, v in GOOD.items() if k != "From"},
        {k: v for k, v in GOOD.items() if k != "To"},
        {k: v for k, v in GOOD.items() if k != "TextBody"},
        {**GOOD, "Attachments": [{"Name": "a.txt", "Content": "aGk="}]},
    ],
    ids=["empty", "no-from", "no-to", "no-body", "attachment-without-type"],
)
def test_invalid_messages_are_refused_with_error_300(payload):
    server = PostmarkServer(TOKEN).start()
    try:
        answer = post(server, json.dumps(payload).encode())
        assert (answer["status"], answer["ErrorCode"]) == (422, 300)
        assert server.received == []
    finally:
        server.stop()


def test_bad_json_and_form_encoding_are_refused_and_a_good_message_passes():
    server = PostmarkServer(TOKEN).start()
    try:
        assert post(server, b"{not json")["ErrorCode"] == 402
        assert post(server, json.dumps(GOOD).encode(), "text/plain")["ErrorCode"] == 300
        assert post(server, json.dumps(GOOD).encode())["ErrorCode"] == 0
        assert server.received == [GOOD]
    finally:
        server.stop()

"""Notification benchmarks: the ``sms`` and ``push`` adapters against the raw calls underneath.

Both sides of each pair send to the same local server (the test suite's wire-format
stand-ins in ``tests.batteries.notification.servers``, on 127.0.0.1, keep-alive):

* ``sms``: ``container.notification().send(to, body)`` (argument and E.164 checks, the
  guarded requests transport that checks every resolved address, error mapping, tracing
  hook) against the provider SDK's own ``client.api.v2010.accounts(sid).messages.create``
  on its default HTTP client, its session's ``trust_env`` off like the adapter's (with it
  on, requests looks up environment proxies on every call and the raw side is slower).
* ``push``: ``send(device, body, title=..., data=...)`` (checks, cached access token,
  guarded httpx transport) against a raw ``httpx.Client.post`` of the same JSON with the
  same bearer token.

Runs of the two sides alternate and the best of several repeats is kept, so a busy
machine slows both alike. Target: at least 0.9x the raw rate.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from bench._measure import best_interleaved
from bench.foundation import Result

PHONE = "+14155550123"
DEVICE = "bench-device-token:APA91bHun4MxP5egoKMwt2KZFBaFUH"


def bench_sms() -> Result:
    """Time ``sms`` send against the provider SDK's ``messages.create`` on one server."""
    from twilio.rest import Client

    from tests.batteries.notification.servers import (
        ACCOUNT_SID,
        AUTH_TOKEN,
        FROM_NUMBER,
        FakeSMSProvider,
    )
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    with FakeSMSProvider() as server:
        block = {
            "adapter": "sms",
            "options": {
                "allow_insecure": True,
                "allow_private": True,
                "sms": {
                    "account_sid": ACCOUNT_SID,
                    "auth_token": AUTH_TOKEN,
                    "from_number": FROM_NUMBER,
                    "endpoint": server.url,
                },
            },
        }
        container = Container(Config.load({"notification": block}, {}))
        sms = container.notification()
        raw = Client(ACCOUNT_SID, AUTH_TOKEN, environment={"TOOLKIT": "bench"})
        raw.http_client.session.trust_env = False  # type: ignore[attr-defined]
        raw.api.base_url = server.url
        messages = raw.api.v2010.accounts(ACCOUNT_SID).messages

        def ours(n: int) -> None:
            send = sms.send
            for _ in range(n):
                send(PHONE, "Your code is 424242")
            server.seen.clear()

        def base(n: int) -> None:
            create = messages.create
            for _ in range(n):
                create(to=PHONE, from_=FROM_NUMBER, body="Your code is 424242")
            server.seen.clear()

        try:
            ours(30), base(30)
            mine, theirs = best_interleaved(ours, base, 100, repeats=20)
        finally:
            container.close()
    return Result(
        "sms send vs raw provider SDK messages.create",
        mine,
        theirs,
        "msg/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        number=",.0f",
    )


def bench_push() -> Result:
    """Time ``push`` send against a raw httpx POST of the same message and token."""
    import httpx

    from tests.batteries.notification.servers import PROJECT, FakePushService
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    with FakePushService() as server, tempfile.TemporaryDirectory() as directory:
        account = server.write_account(Path(directory))
        block = {
            "adapter": "push",
            "options": {
                "allow_insecure": True,
                "allow_private": True,
                "push": {"service_account": str(account), "endpoint": server.url},
            },
        }
        container = Container(Config.load({"notification": block}, {}))
        push = container.notification()
        push.ping()  # the token exchange happens once, outside the loops
        token = push._access_token()  # the cached one: no exchange
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        url = f"{server.url}/v1/projects/{PROJECT}/messages:send"
        payload = {
            "message": {
                "token": DEVICE,
                "notification": {"title": "Orders", "body": "Your order shipped"},
                "data": {"order": "A-17"},
            }
        }
        raw = httpx.Client(trust_env=False, follow_redirects=False)

        def ours(n: int) -> None:
            send = push.send
            for _ in range(n):
                send(DEVICE, "Your order shipped", title="Orders", data={"order": "A-17"})
            server.seen.clear()

        def base(n: int) -> None:
            post = raw.post
            for _ in range(n):
                answer = post(url, content=json.dumps(payload).encode(), headers=headers)
                answer.raise_for_status()
                answer.json()
            server.seen.clear()

        try:
            ours(30), base(30)
            mine, theirs = best_interleaved(ours, base, 100, repeats=20)
        finally:
            raw.close()
            container.close()
    return Result(
        "push send vs raw httpx POST messages:send",
        mine,
        theirs,
        "msg/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        number=",.0f",
    )


BENCHMARKS = (bench_sms, bench_push)

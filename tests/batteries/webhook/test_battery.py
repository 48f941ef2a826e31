"""Options, checks, the missing table, the admin page and the attempt timeout."""

from __future__ import annotations

import http.server
import threading
import time
from datetime import UTC, datetime

import pytest

from tests.ports import free_port
from tests.support.batteries import empty_sqlite, refused_without_tables
from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.webhook import TargetRefusedError
from toolkit_batteries.webhook.models import WebhookDelivery

from .conftest import SECRET


def ids(toolkit: dict) -> list[str]:
    return sorted(message.id for message in service_checks("webhook", Config.load(toolkit, {})))


def test_defaults_match_the_spec(make_hook):
    hook = make_hook("http-sqlite", allow_private_targets=False).hook
    assert hook.timeout == 10.0 and hook.max_retries == 0
    assert hook.replay_tolerance == 300.0 and hook.allow_private_targets is False
    assert hook.retry_policy.max_attempts == 1


def test_a_negative_option_fails_the_open_naming_the_field(sqlite_dsn):
    toolkit = {
        "db": {"adapter": "sqlfile", "options": {"dsn": sqlite_dsn}},
        "webhook": {"options": {"max_retries": -1}},
    }
    container = Container(Config.load(toolkit, {}))
    try:
        with pytest.raises(InvalidOptionsError, match='"max_retries"'):
            container.webhook()
    finally:
        container.close()


def test_opening_without_the_table_names_migrate(tmp_path):
    path = empty_sqlite(tmp_path)
    block = {"adapter": "sqlfile", "options": {"dsn": str(path)}}
    refused_without_tables(Container(Config.load({"db": block}, {})), "webhook", path)


def test_checks():
    assert ids({"webhook": {}}) == []
    assert ids({"webhook": {"options": {"timeout": "-1s", "max_retries": -2}}}) == [
        "toolkit_webhook.E002",
        "toolkit_webhook.E002",
    ]
    assert ids({"webhook": {"adapter": "queue", "options": {"queue_adapter": "nope"}}}) == [
        "toolkit_webhook.E003"
    ]
    assert ids({"webhook": {"options": {"allow_private_targets": True}}}) == [
        "toolkit_webhook.W001"
    ]
    assert ids({"webhook": {"options": {"dead_letter_topic": "dead"}}}) == ["toolkit_webhook.W002"]
    assert ids({"webhook": {"adapter": "queue", "options": {"queue_adapter": "redis"}}}) == []


def test_an_attempt_slower_than_the_timeout_fails_and_is_retried(make_hook):
    """``timeout`` bounds each attempt; a time-out is retryable."""
    hits: list[float] = []

    class Slow(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            hits.append(time.monotonic())
            if len(hits) == 1:
                time.sleep(1.5)
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        hook = make_hook("http-sqlite", timeout="300ms", max_retries=1).hook
        started = time.monotonic()
        delivery = hook.send(f"http://127.0.0.1:{port}/", {}, event="e", secret=SECRET)
        assert time.monotonic() - started < 1.4  # did not wait for the slow answer
        assert (delivery.status, delivery.attempts, delivery.response_status) == (
            "succeeded",
            2,
            204,
        )
        assert len(hits) == 2
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------- admin

PAGE = "/admin/toolkit_webhook/webhookdelivery/"


@pytest.fixture
def _admin_urls(settings):
    settings.ROOT_URLCONF = "tests.admin.urls"


@pytest.mark.usefixtures("_admin_urls")
def test_the_admin_lists_deliveries_read_only_and_never_a_secret(admin_client, caplog):
    now = datetime.now(UTC)
    row = WebhookDelivery.objects.create(
        delivery_id="d-1",
        instance="default",
        adapter="http",
        target="https://hooks.example.com/orders",
        event="order.paid",
        status="failed",
        attempts=3,
        response_status=500,
        last_error="HTTP 500",
        body_size=12,
        created_at=now,
        updated_at=now,
    )
    page = admin_client.get(PAGE).content.decode()
    for shown in ("d-1", "order.paid", "https://hooks.example.com/orders", "failed", "HTTP 500"):
        assert shown in page
    detail = admin_client.get(f"{PAGE}{row.pk}/change/").content.decode()
    assert "HTTP 500" in detail and "secret" not in detail.lower()
    assert admin_client.get(f"{PAGE}add/").status_code == 403
    response = admin_client.post(f"{PAGE}{row.pk}/change/", {"status": "succeeded"})
    assert response.status_code == 403
    row.refresh_from_db()
    assert row.status == "failed"
    field_names = {f.name for f in WebhookDelivery._meta.get_fields()}
    assert not {"secret", "signature", "body"} & field_names


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("ftp://hooks.example.com/x", "https"),
        ("https://user:pw@hooks.example.com/x", "credentials"),
        ("https://hooks.example.com/x#frag", "fragment"),
        ("https://hooks.example.com/x?token=1#frag", "fragment"),
        ("https://[::1]/x", "allow_private_targets"),
        ("https://169.254.169.254/latest/meta-data", "allow_private_targets"),
        ("https://[::ffff:10.0.0.1]/x", "allow_private_targets"),
        ("https://10.1.2.3/x", "allow_private_targets"),
        ("https://sub.localhost/x", "allow_private_targets"),
    ],
)
def test_targets_breaking_the_outbound_rules_are_refused(make_hook, target, reason):
    hook = make_hook("http-sqlite", allow_private_targets=False).hook
    with pytest.raises(TargetRefusedError, match=reason) as info:
        hook.send(target, {}, event="e", secret=SECRET)
    assert "pw@" not in str(info.value) and "meta-data" not in str(info.value)
    assert hook.check_target("https://hooks.example.com/x?token=abc") == (
        "https://hooks.example.com/x?token=abc"
    )


def test_a_new_secret_signs_the_next_send_not_the_remembered_one(make_hook, receiver):
    """``send`` remembers the last secret's keys: a different secret must replace them."""
    from toolkit_batteries.webhook import verify
    from toolkit_batteries.webhook.signing import SignatureError

    hook = make_hook("http-sqlite").hook
    for secret in ("first-secret", "second-secret", "first-secret"):
        hook.send(receiver.url(), {"n": 1}, event="e", secret=secret)
    first, second, third = receiver.wait_for(3)
    verify(first.headers, first.body, "first-secret")
    verify(second.headers, second.body, "second-secret")
    verify(third.headers, third.body, "first-secret")
    with pytest.raises(SignatureError):
        verify(second.headers, second.body, "first-secret")
    hook.close()
    assert hook._last_keys is None


def test_an_allowed_target_is_remembered_but_a_refused_one_is_refused_every_time(make_hook):
    hook = make_hook("http-sqlite", allow_private_targets=False).hook
    for _ in range(2):
        with pytest.raises(TargetRefusedError):
            hook.send("http://127.0.0.1:9/hook", b"x", event="e", secret=SECRET)
    assert hook._allowed == {}

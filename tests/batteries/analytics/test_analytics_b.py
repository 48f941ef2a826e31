"""What only the ``analytics_b`` adapter has: the provider's wire format, the bounded
buffer and its flushes, the delivery failures, and the outbound rules.

The provider is stood in by :class:`~.server.BatchServer` on 127.0.0.1, which records
every request it receives.
"""

from __future__ import annotations

import logging
import socket
import time
from datetime import datetime

import posthog.version
import pytest

from toolkit_batteries.analytics import AnalyticsDeliveryError
from toolkit_batteries.analytics.adapters.posthog import PostHogAnalytics
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import host_is_public

from .conftest import API_KEY, open_analytics, provider_block
from .server import BatchServer


def direct(server: BatchServer, **kwargs) -> PostHogAnalytics:
    """Build the adapter on the decoded options, with buffer settings of the test's own."""
    options = Config.load({"analytics": provider_block(server)}, {}).service("analytics").options
    return PostHogAnalytics(options, **kwargs)


def test_the_request_is_the_providers_batch_call(server: BatchServer) -> None:
    container = open_analytics(provider_block(server))
    analytics = container.analytics()
    capture_id = analytics.capture(
        "signup", {"plan": "pro"}, distinct_id="u1", groups={"company": "acme"}
    )
    identify_id = analytics.identify("u1", {"email_domain": "example.org"})
    group_id = analytics.group("acme", {"seats": 12}, distinct_id="u1")
    assert analytics.flush() == 3
    container.close()

    (request,) = server.requests
    assert (request.method, request.path, request.status) == ("POST", "/batch/", 200)
    assert request.header("Content-Type") == "application/json"
    assert request.header("User-Agent") == f"posthog-python/{posthog.version.VERSION}"
    body = request.body
    assert body["api_key"] == API_KEY  # the provider's auth: the write key in the body
    assert body["historical_migration"] is False
    datetime.fromisoformat(body["sent_at"])
    lib = {"$lib": "posthog-python", "$lib_version": posthog.version.VERSION}
    capture, identify, group = body["batch"]
    assert capture["event"] == "signup" and capture["distinct_id"] == "u1"
    assert capture["uuid"] == capture_id
    assert capture["properties"] == {"plan": "pro", "$groups": {"company": "acme"}, **lib}
    assert datetime.fromisoformat(capture["timestamp"]).tzinfo is not None
    assert (identify["event"], identify["uuid"]) == ("$identify", identify_id)
    assert identify["properties"] == {"$set": {"email_domain": "example.org"}, **lib}
    assert (group["event"], group["uuid"], group["distinct_id"]) == (
        "$groupidentify",
        group_id,
        "u1",
    )
    assert group["properties"] == {
        "$group_type": "organization",
        "$group_key": "acme",
        "$group_set": {"seats": 12},
        **lib,
    }


def test_an_injected_clock_stamps_events(server: BatchServer) -> None:
    analytics = direct(server, background=False)
    analytics.clock = lambda: 1_800_000_000.0
    analytics.capture("e", distinct_id="u")
    analytics.close()
    assert server.events()[0]["timestamp"] == "2027-01-15T08:00:00+00:00"


def test_flush_sends_batches_of_batch_size(server: BatchServer) -> None:
    analytics = direct(server, batch_size=3, background=False)
    for n in range(7):
        analytics.capture("e", {"n": n}, distinct_id="u")
    assert analytics.stats()["queued"] == 7 and server.requests == []  # buffered, not sent
    assert analytics.flush() == 7
    assert [len(r.body["batch"]) for r in server.requests] == [3, 3, 1]
    assert [e["properties"]["n"] for e in server.events()] == list(range(7))
    analytics.close()


def test_a_full_batch_is_sent_by_the_background_thread(server: BatchServer) -> None:
    analytics = direct(server, batch_size=2, flush_interval=60)
    analytics.capture("a", distinct_id="u")
    analytics.capture("b", distinct_id="u")  # the batch is full: the thread sends it
    server.wait_for(1)
    assert [e["event"] for e in server.events()] == ["a", "b"]
    analytics.close()


def test_the_thread_flushes_on_a_timer(server: BatchServer) -> None:
    analytics = direct(server, batch_size=100, flush_interval=0.2)
    analytics.capture("tick", distinct_id="u")
    server.wait_for(1)
    assert [e["event"] for e in server.events()] == ["tick"]
    analytics.close()


def test_close_flushes_what_is_buffered(server: BatchServer) -> None:
    container = open_analytics(provider_block(server))
    container.analytics().capture("last", distinct_id="u")
    assert server.requests == []
    container.close()
    assert [e["event"] for e in server.events()] == ["last"]


def test_a_full_buffer_drops_the_oldest_events_and_counts_them(server, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="toolkit.analytics")
    analytics = direct(server, batch_size=2, max_buffer=3, background=False)
    for n in range(5):
        analytics.capture("e", {"n": n}, distinct_id="u")
    assert analytics.stats() == {"queued": 3, "sent": 0, "dropped": 2, "failed": 0}
    assert analytics.flush() == 3
    assert [e["properties"]["n"] for e in server.events()] == [2, 3, 4]
    drops = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert len(drops) == 1  # once at the first drop, not once per event
    analytics.close()


def test_a_server_error_keeps_the_batch_for_the_next_flush(server: BatchServer) -> None:
    analytics = direct(server, background=False)
    analytics.capture("a", distinct_id="u")
    analytics.capture("b", distinct_id="u")
    server.fail_next(503)
    with pytest.raises(AnalyticsDeliveryError) as caught:
        analytics.flush()
    assert caught.value.retryable and "HTTP 503" in str(caught.value)
    assert analytics.stats()["queued"] == 2
    analytics.capture("c", distinct_id="u")
    assert analytics.flush() == 3
    assert [e["event"] for e in server.events()] == ["a", "b", "c"]  # order kept
    assert analytics.stats() == {"queued": 0, "sent": 3, "dropped": 0, "failed": 0}
    analytics.close()


def test_a_refused_batch_is_dropped_and_counted(server: BatchServer) -> None:
    analytics = direct(server, background=False)
    analytics.capture("a", distinct_id="u")
    server.fail_next(400)
    with pytest.raises(AnalyticsDeliveryError) as caught:
        analytics.flush()
    assert not caught.value.retryable and "HTTP 400" in str(caught.value)
    assert analytics.stats() == {"queued": 0, "sent": 0, "dropped": 0, "failed": 1}
    assert analytics.flush() == 0
    analytics.close()


def test_a_wrong_key_is_a_401_without_the_key_or_the_providers_text(server) -> None:
    block = provider_block(server, api_key="phc_wrong-key-Zx81")
    container = open_analytics(block)
    container.analytics().capture("e", distinct_id="u")
    with pytest.raises(AnalyticsDeliveryError) as caught:
        container.analytics().flush()
    message = str(caught.value)
    assert "HTTP 401" in message
    assert "phc_wrong-key-Zx81" not in message and "Project API key" not in message
    assert server.requests[0].status == 401
    container.close()


def test_a_network_failure_is_retryable(server: BatchServer) -> None:
    analytics = direct(server, background=False)
    analytics.capture("a", distinct_id="u")
    server.__exit__()  # the provider goes away
    with pytest.raises(AnalyticsDeliveryError) as caught:
        analytics.flush()
    assert caught.value.retryable and analytics.stats()["queued"] == 1
    analytics.close()  # the final flush fails too: logged, not raised


def test_the_api_key_is_required() -> None:
    with pytest.raises(InvalidOptionsError, match=r'analytics\.default: option "api_key"'):
        open_analytics({"adapter": "posthog", "options": {}}).analytics()


def test_the_default_endpoint_is_the_providers_https_host() -> None:
    container = open_analytics({"adapter": "posthog", "options": {"api_key": API_KEY}})
    analytics = container.analytics()
    assert analytics._endpoint == "https://us.i.posthog.com"
    container.close()  # nothing buffered: nothing sent


# --------------------------------------------------------------------------- outbound rules


def test_a_loopback_endpoint_is_refused_at_open_and_nothing_is_sent(server) -> None:
    block = provider_block(server, allow_private=False)
    with pytest.raises(InvalidOptionsError) as caught:
        open_analytics(block).analytics()
    assert '"endpoint"' in str(caught.value) and "allow_private" in str(caught.value)
    assert "127.0.0.1" not in str(caught.value)
    assert server.requests == []


def test_plain_http_is_refused_without_allow_insecure(server) -> None:
    with pytest.raises(InvalidOptionsError, match="allow_insecure"):
        open_analytics(provider_block(server, allow_insecure=False)).analytics()
    assert server.requests == []


def test_a_name_resolving_to_loopback_is_refused_when_connecting(server, monkeypatch) -> None:
    """DNS answers a public-looking name with 127.0.0.1: the guard refuses after resolution."""
    name = "ingest.analytics-test.example"
    assert host_is_public(name)  # the open-time check cannot know
    real = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        return real("127.0.0.1" if host == name else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    block = provider_block(server, endpoint=f"http://{name}:{server.port}", allow_private=False)
    container = open_analytics(block)
    analytics = container.analytics()
    analytics.capture("e", distinct_id="u")
    with pytest.raises(InvalidOptionsError) as caught:
        analytics.flush()
    assert "allow_private" in str(caught.value) and name not in str(caught.value)
    container.close()
    time.sleep(0.05)
    assert server.requests == []  # the server received nothing


def test_allowances_are_logged_at_open(server, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="toolkit.analytics")
    container = open_analytics(provider_block(server))
    container.analytics()
    container.close()
    assert any("allows plain http and private addresses" in r.getMessage() for r in caplog.records)

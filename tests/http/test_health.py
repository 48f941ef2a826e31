"""``/healthz`` answers without I/O; ``/readyz`` pings every opened service, one row each."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client, override_settings

from tests.batteries.ratelimit.private_redis import PrivateRedis
from tests.support.clock import FakeClock
from toolkit_batteries import services


@pytest.fixture
def redis_server():
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fresh_services():
    services.close()
    yield
    services.close()


@pytest.fixture
def clock(monkeypatch):
    from toolkit_batteries.http import health

    fake = FakeClock()
    monkeypatch.setattr(health, "clock", fake)
    monkeypatch.setattr(health, "_cache", health._Cache())
    return fake


#: A project that installs only the db and lock batteries (the test settings install all).
FEW_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "toolkit_batteries",
    "toolkit_batteries.db",
    "toolkit_batteries.lock",
]


def rows_of(response) -> dict[tuple[str, str], dict]:
    body = json.loads(response.content)
    return {(row["service"], row["instance"]): row for row in body["services"]}


def test_healthz_is_liveness_and_touches_no_server(fresh_services):
    # The only configured server is unreachable: liveness must not care.
    toolkit = {"lock": {"adapter": "kvserver", "options": {"addr": "127.0.0.1:1"}}}
    with override_settings(TOOLKIT=toolkit):
        services.container()
        response = Client().get("/healthz")
        assert response.status_code == 200 and json.loads(response.content) == {"status": "ok"}
        assert services.container().opened() == ()
    assert Client().post("/healthz").status_code == 405


def test_readyz_has_a_row_for_every_configured_service_on_a_fresh_start(fresh_services, clock):
    lock = {"default": {"adapter": "memory"}, "second": {"adapter": "memory"}}
    with override_settings(TOOLKIT={"lock": lock}, INSTALLED_APPS=FEW_APPS):
        assert services.container().opened() == ()  # nothing used since start
        response = Client().get("/readyz")
        assert response.status_code == 200 and response["Cache-Control"] == "no-store"
        rows = rows_of(response)
    assert set(rows) == {("lock", "default"), ("lock", "second"), ("db", "default")}
    assert rows["lock", "default"]["adapter"] == "memory"
    assert rows["db", "default"]["adapter"] == "sqlfile"
    # The product it talks to beside the canonical name; an adapter of no product is itself.
    assert rows["db", "default"]["product"] == "sqlite"
    assert rows["lock", "default"]["product"] == "memory"
    assert all(row["status"] == "ok" and row["latency_ms"] >= 0 for row in rows.values())
    assert all("error" not in row for row in rows.values())


def test_readyz_lists_every_installed_battery_of_the_test_project(fresh_services, clock):
    from toolkit_batteries.core.catalog import SERVICES

    rows = rows_of(Client().get("/readyz"))
    installed = {name.rpartition(".")[2] for name in settings.INSTALLED_APPS}
    assert {service for service, _ in rows} == installed & set(SERVICES)


def test_readyz_reuses_its_answer_for_one_second(fresh_services, clock, redis_server):
    toolkit = {"lock": {"adapter": "kvserver", "options": {"addr": redis_server.addr}}}
    with override_settings(TOOLKIT=toolkit, INSTALLED_APPS=FEW_APPS):
        assert Client().get("/readyz").status_code == 200
        redis_server.stop()
        clock.now += 0.9  # a load balancer probing again within the second: no probe run
        assert Client().get("/readyz").status_code == 200
        clock.now += 0.2
        response = Client().get("/readyz")
    assert response.status_code == 503
    assert rows_of(response)["lock", "default"]["status"] == "error"


def test_readyz_is_503_naming_the_service_whose_redis_stopped(fresh_services, clock, redis_server):
    toolkit = {
        "lock": {"adapter": "memory"},
        "ratelimit": {"adapter": "kvserver", "options": {"kvserver": {"addr": redis_server.addr}}},
        "resilience": {"adapter": "memory"},
    }
    with override_settings(TOOLKIT=toolkit, INSTALLED_APPS=FEW_APPS):
        services.ratelimit().allow("warm-up", 1)
        assert Client().get("/readyz").status_code == 200
        redis_server.stop()
        clock.now += 5
        response = Client().get("/readyz")
        rows = rows_of(response)
    assert response.status_code == 503
    assert json.loads(response.content)["status"] == "unavailable"
    failed = rows["ratelimit", "default"]
    assert failed["status"] == "error" and failed["adapter"] == "kvserver"
    assert failed["product"] == "redis"
    assert failed["error"]  # a code or class name, never the driver's message
    assert rows["lock", "default"]["status"] == "ok"
    assert rows["resilience", "default"]["status"] == "ok"
    text = response.content.decode()
    for leak in (str(redis_server.port), "127.0.0.1", "redis://", "refused"):
        assert leak not in text


def test_a_hung_service_is_an_error_row_after_the_timeout(fresh_services):
    import threading
    import time

    from toolkit_batteries.http.health import readiness

    release = threading.Event()

    class Hung:
        adapter_name = "hung"

        def ping(self) -> None:
            release.wait(5)

    class FakeContainer:
        config = None

        def lock(self, instance: str) -> Hung:
            return Hung()

    started = time.monotonic()
    try:
        ok, rows = readiness(FakeContainer(), [("lock", "default")], timeout=0.2)
    finally:
        release.set()
    assert time.monotonic() - started < 2
    assert not ok and rows[0]["error"] == "timeout" and rows[0]["adapter"] == "hung"


def test_probes_run_concurrently(fresh_services):
    """Three services that answer only once all three are being probed at the same time.

    Probed one after another, the first would wait at the barrier until its timeout and
    every row would be an error; probed concurrently, all three pass the barrier.
    """
    import threading

    from toolkit_batteries.http.health import readiness

    barrier = threading.Barrier(3, timeout=5)

    class Meeting:
        adapter_name = "meeting"

        def ping(self) -> None:
            barrier.wait()

    class FakeContainer:
        config = None

        def lock(self, instance: str) -> Meeting:
            return Meeting()

    pairs = [("lock", "a"), ("lock", "b"), ("lock", "c")]
    try:
        ok, rows = readiness(FakeContainer(), pairs, timeout=3)
    finally:
        barrier.abort()
    assert ok, rows
    assert [(row["instance"], row["status"]) for row in rows] == [
        ("a", "ok"),
        ("b", "ok"),
        ("c", "ok"),
    ]

"""``/healthz`` answers without I/O; ``/readyz`` pings every opened service, one row each."""

from __future__ import annotations

import json

import pytest
from django.test import Client, override_settings

from tests.batteries.ratelimit.private_redis import PrivateRedis
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


def test_readyz_is_200_with_one_row_per_opened_service(fresh_services):
    lock = {"default": {"adapter": "memory"}, "second": {"adapter": "memory"}}
    with override_settings(TOOLKIT={"lock": lock}):
        assert json.loads(Client().get("/readyz").content) == {"status": "ok", "services": []}
        services.lock()
        services.lock("second")
        services.db()
        response = Client().get("/readyz")
        assert response.status_code == 200 and response["Cache-Control"] == "no-store"
        rows = rows_of(response)
    assert set(rows) == {("lock", "default"), ("lock", "second"), ("db", "default")}
    assert rows["lock", "default"]["adapter"] == "memory"
    assert rows["db", "default"]["adapter"] == "sqlfile"
    assert all(row["status"] == "ok" and row["latency_ms"] >= 0 for row in rows.values())
    assert all("error" not in row for row in rows.values())


def test_readyz_is_503_naming_the_service_whose_redis_stopped(fresh_services, redis_server):
    toolkit = {
        "lock": {"adapter": "memory"},
        "ratelimit": {"adapter": "kvserver", "options": {"kvserver": {"addr": redis_server.addr}}},
        "resilience": {"adapter": "memory"},
    }
    with override_settings(TOOLKIT=toolkit):
        services.lock()
        services.ratelimit().allow("warm-up", 1)
        services.resilience()
        assert Client().get("/readyz").status_code == 200
        redis_server.stop()
        response = Client().get("/readyz")
        rows = rows_of(response)
    assert response.status_code == 503
    assert json.loads(response.content)["status"] == "unavailable"
    failed = rows["ratelimit", "default"]
    assert failed["status"] == "error" and failed["adapter"] == "kvserver"
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

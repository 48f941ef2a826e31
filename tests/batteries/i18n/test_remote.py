"""What only the ``remote`` adapter has: fetching, bounds, outbound rules, the API key."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError

from .conftest import remote_block
from .server import FakeTranslationService

API_KEY = "i18n-secret-key-8d1f0c2a"


def opened(server: FakeTranslationService, **options):
    container = Container(Config.load({"i18n": remote_block(server, **options)}, {}))
    return container, container.i18n()


def test_defaults_match_the_spec() -> None:
    options = Config.load({"i18n": {"adapter": "remote"}}, {}).service("i18n").options.remote
    assert options.timeout.total_seconds() == 30
    assert options.max_in_flight == 1000
    assert options.allow_insecure is False and options.allow_private is False


def test_catalog_fetched_once_per_locale(service: FakeTranslationService) -> None:
    container, i18n = opened(service)
    try:
        for _ in range(5):
            assert i18n.t("greeting", locale="fr") == "Bonjour"
        assert service.requests == ["/catalogs/fr"]
        i18n.reload()
        assert i18n.t("greeting", locale="fr") == "Bonjour"
        assert service.requests.count("/catalogs/fr") == 2
    finally:
        container.close()


def test_concurrent_first_lookups_fetch_once(service: FakeTranslationService) -> None:
    service.delay = 0.2
    container, i18n = opened(service)
    try:
        answers: list[str] = []
        threads = [
            threading.Thread(target=lambda: answers.append(i18n.t("greeting", locale="fr")))
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert answers == ["Bonjour"] * 8
        assert service.requests == ["/catalogs/fr"]
    finally:
        container.close()


def test_max_in_flight_bounds_concurrent_fetches(service: FakeTranslationService) -> None:
    service.delay = 0.3
    container, i18n = opened(service, max_in_flight=2, timeout="5s")
    locales = [f"x{c}" for c in "abcdef"]  # unknown locales: one 404 fetch each
    try:
        threads = [
            threading.Thread(target=i18n.get, args=("greeting",), kwargs={"locale": name})
            for name in locales
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(15)
        fetched = {path for path in service.requests if path.startswith("/catalogs/x")}
        assert fetched == {f"/catalogs/{name}" for name in locales}
        assert service.peak == 2
    finally:
        container.close()


def test_unbounded_enough_runs_them_together(service: FakeTranslationService) -> None:
    service.delay = 0.3
    container, i18n = opened(service, max_in_flight=10, timeout="5s")
    try:
        threads = [
            threading.Thread(target=i18n.get, args=("greeting",), kwargs={"locale": f"y{c}"})
            for c in "abcdef"
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(15)
        assert service.peak >= 3
    finally:
        container.close()


def test_timeout_raises_and_is_not_cached(service: FakeTranslationService) -> None:
    service.delay = 2.0
    container, i18n = opened(service, timeout="0.3s")
    try:
        started = time.monotonic()
        with pytest.raises(ServiceUnavailableError, match="timed out"):
            i18n.t("greeting", locale="fr")
        assert time.monotonic() - started < 1.5
        service.delay = 0
        assert i18n.t("greeting", locale="fr") == "Bonjour"
    finally:
        container.close()


def test_server_error_is_unavailable_not_missing(service: FakeTranslationService) -> None:
    service.status = 500
    container, i18n = opened(service)
    try:
        with pytest.raises(ServiceUnavailableError, match="HTTP 500"):
            i18n.t("greeting", locale="fr")
        with pytest.raises(ServiceUnavailableError):
            i18n.ping()
        service.status = None
        i18n.ping()
        assert i18n.t("greeting", locale="fr") == "Bonjour"
    finally:
        container.close()


def test_server_down_is_unavailable(service: FakeTranslationService) -> None:
    container, i18n = opened(service)
    service.stop()
    try:
        with pytest.raises(ServiceUnavailableError):
            i18n.t("greeting", locale="fr")
    finally:
        container.close()


def test_https_only_without_allow_insecure(service: FakeTranslationService) -> None:
    block = remote_block(service, allow_insecure=False)
    with pytest.raises(InvalidOptionsError, match=r"remote\.allow_insecure"):
        Container(Config.load({"i18n": block}, {})).i18n()
    assert service.requests == []


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_private_target_refused_without_allow_private(
    service: FakeTranslationService, host: str
) -> None:
    block = remote_block(service, allow_private=False)
    block["options"]["remote"]["endpoint"] = f"http://{host}:{service.port}"
    container = Container(Config.load({"i18n": block}, {}))
    with pytest.raises(InvalidOptionsError) as caught:
        container.i18n().t("greeting", locale="fr")
    assert "remote.allow_private" in str(caught.value)
    assert host not in str(caught.value)
    assert service.requests == []
    container.close()


@pytest.mark.parametrize(("field", "value"), [("max_in_flight", -1), ("timeout", "-2s")])
def test_open_refuses_a_bound_that_is_not_positive(
    service: FakeTranslationService, field: str, value: object
) -> None:
    # The system check reports it too; opening must refuse it where no check ran.
    block = remote_block(service, **{field: value})
    with pytest.raises(InvalidOptionsError) as caught:
        Container(Config.load({"i18n": block}, {})).i18n()
    assert str(caught.value) == f'i18n.default: option "remote.{field}" must be positive'
    assert service.requests == []


def test_endpoint_required() -> None:
    with pytest.raises(InvalidOptionsError, match=r"remote\.endpoint"):
        Container(Config.load({"i18n": {"adapter": "remote"}}, {})).i18n()


def test_api_key_sent_and_never_shown(
    service: FakeTranslationService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    container, i18n = opened(service, api_key=API_KEY)
    try:
        assert i18n.t("greeting", locale="fr") == "Bonjour"
        assert service.authorization == f"Bearer {API_KEY}"
        i18n.t("no.such.key", locale="fr")
        service.status = 503
        i18n.reload()
        with pytest.raises(ServiceUnavailableError) as caught:
            i18n.t("greeting", locale="fr")
        shown = [repr(i18n), str(caught.value), repr(container), caplog.text]
        shown.append(repr(Config.load({"i18n": remote_block(service, api_key=API_KEY)}, {})))
        assert all(API_KEY not in text for text in shown)
        assert "i18n.default: remote.allow_private is on" in caplog.text
    finally:
        container.close()

"""The strict translation service refuses what the ``remote`` format does not allow.

Every i18n ``remote`` test runs against :class:`tests.support.translation_server.
TranslationServer`; these tests show it is worth its name: each malformed request an
adapter could send is refused with the documented status, and the adapter's own requests
pass every rule (so an adapter that drifts from the format fails its tests).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError

from .conftest import CATALOGS, remote_block
from .server import FakeTranslationService

KEY = "i18n-strict-key-5b0e9c71"
JSON = {"Accept": "application/json"}


@pytest.fixture
def keyed() -> Iterator[FakeTranslationService]:
    """Run a service that takes only ``Authorization: Bearer <KEY>``."""
    with FakeTranslationService(CATALOGS, key=KEY) as server:
        yield server


def _get(server: FakeTranslationService, path: str, **kwargs) -> httpx.Response:
    with httpx.Client(base_url=server.url, trust_env=False) as client:
        return client.request(kwargs.pop("method", "GET"), path, **kwargs)


def test_the_adapters_requests_pass_every_rule(keyed: FakeTranslationService) -> None:
    container = Container(Config.load({"i18n": remote_block(keyed, api_key=KEY)}, {}))
    try:
        i18n = container.i18n()
        assert i18n.t("greeting", locale="fr-ca") == "Allô"  # normalized to fr_CA
        assert i18n.t("greeting", locale="de") == "Hello"  # 404 for de, then the fallback
        i18n.ping()
    finally:
        container.close()
    answered = {record.path: record.status for record in keyed.received}
    assert answered["/catalogs/fr_CA"] == 200 and answered["/catalogs/de"] == 404
    assert answered["/catalogs"] == 200
    assert all(record.header("accept") == "application/json" for record in keyed.received)


def test_a_wrong_or_malformed_key_is_401_and_the_adapter_reports_it(
    keyed: FakeTranslationService,
) -> None:
    for auth in (f"Token {KEY}", f"bearer {KEY}", "Bearer  " + KEY, "Bearer other-key"):
        answer = _get(keyed, "/catalogs/fr", headers={**JSON, "Authorization": auth})
        assert answer.status_code == 401, auth
        assert answer.json()["error"]["code"] == "unauthorized"
    assert _get(keyed, "/catalogs/fr", headers=JSON).status_code == 401
    container = Container(Config.load({"i18n": remote_block(keyed, api_key="other")}, {}))
    try:
        with pytest.raises(ServiceUnavailableError) as caught:
            container.i18n().t("greeting", locale="fr")
    finally:
        container.close()
    assert "HTTP 401" in str(caught.value)


def test_only_get_without_body_or_query(service: FakeTranslationService) -> None:
    posted = _get(service, "/catalogs/fr", method="POST", headers=JSON, json={})
    assert posted.status_code == 405 and posted.headers["allow"] == "GET"
    with_body = _get(service, "/catalogs/fr", headers=JSON, content=b"{}")
    assert with_body.status_code == 400
    assert with_body.json()["error"]["code"] == "invalid_request"
    queried = _get(service, "/catalogs/fr", headers=JSON, params={"v": "2"})
    assert queried.status_code == 400
    assert _get(service, "/catalogs/fr", headers=JSON).status_code == 200


@pytest.mark.parametrize("locale", ["fr-CA", "FR_ca", "fr_CA-x", "fr/../en", "_fr"])
def test_a_locale_that_is_not_normalized_is_400(
    service: FakeTranslationService, locale: str
) -> None:
    answer = _get(service, "/catalogs/" + locale.replace("/", "%2F"), headers=JSON)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_locale"


@pytest.mark.parametrize("accept", [None, "text/html", "application/xml, text/*"])
def test_an_accept_without_json_is_406(service: FakeTranslationService, accept) -> None:
    headers = {"Accept": accept} if accept else {}
    with httpx.Client(base_url=service.url, trust_env=False) as client:
        client.headers.pop("accept", None)  # httpx sends */* unless told otherwise
        answer = client.get("/catalogs/fr", headers=headers)
    assert answer.status_code == 406
    assert answer.json()["error"]["code"] == "not_acceptable"

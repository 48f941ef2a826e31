"""What differs between the adapters: refusals over HTTP, sources, and bad options."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from toolkit_batteries import services
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, http_status

from .conftest import configured

SECRETISH = "tenant-value-that-must-not-echo"


def refused(response, reason: str) -> None:
    assert response.status_code == http_status("invalid_argument") == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": {
            "code": "invalid_argument",
            "message": "tenant required" if reason == "required" else f"tenant {reason}",
            "fields": {"tenant": [reason]},
        }
    }


@pytest.mark.parametrize("variant", ["header", "subdomain"])
def test_missing_malformed_and_unknown_tenants_answer_400(
    variant: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    # In subdomain mode the header is a source only when named explicitly.
    with configured(variant, **({"header": "X-Tenant-ID"} if variant == "subdomain" else {})):
        client = Client()
        refused(client.get("/whoami"), "required")
        refused(client.get("/whoami", headers={"X-Tenant-ID": "bad id!"}), "malformed")
        refused(client.get("/whoami", headers={"X-Tenant-ID": "x" * 64}), "malformed")
        response = client.get("/whoami", headers={"X-Tenant-ID": SECRETISH})
        refused(response, "unknown")
        assert SECRETISH not in response.content.decode()
    assert SECRETISH not in caplog.text


def test_allowed_empty_accepts_every_well_formed_id() -> None:
    with configured("header", allowed=[]):
        response = Client().get("/whoami", headers={"X-Tenant-ID": "anyone-42"})
        assert response.status_code == 200
        assert response.json()["tenant"] == "anyone-42"
        refused(Client().get("/whoami", headers={"X-Tenant-ID": "no/slash"}), "malformed")


def test_header_name_is_configurable() -> None:
    with configured("header", header="X-Org"):
        client = Client()
        assert client.get("/whoami", headers={"X-Org": "globex"}).json()["tenant"] == "globex"
        refused(client.get("/whoami", headers={"X-Tenant-ID": "globex"}), "required")


def test_subdomain_and_header_must_agree_when_both_are_given() -> None:
    with configured("subdomain", header="X-Tenant-ID"):
        client = Client()
        host = {"Host": "acme.example.com"}
        assert client.get("/whoami", headers=host).json()["tenant"] == "acme"
        both = {**host, "X-Tenant-ID": "acme"}
        assert client.get("/whoami", headers=both).json()["tenant"] == "acme"
        refused(client.get("/whoami", headers={**host, "X-Tenant-ID": "globex"}), "ambiguous")
        # A host outside the pattern carries no subdomain; the enabled header still may.
        other = {"Host": "example.org", "X-Tenant-ID": "globex"}
        assert client.get("/whoami", headers=other).json()["tenant"] == "globex"
        refused(client.get("/whoami", headers={"Host": "example.org"}), "required")
        # Case and port do not matter to the host.
        assert (
            client.get("/whoami", headers={"Host": "ACME.example.com:8000"}).json()["tenant"]
            == "acme"
        )


def test_subdomain_pattern_without_a_named_group_uses_the_first_group() -> None:
    with configured("header", subdomain_regex=r"^([a-z]+)\.shop\.test$"):
        response = Client().get("/whoami", headers={"Host": "globex.shop.test"})
        assert response.json()["tenant"] == "globex"


def test_single_ignores_what_the_request_says() -> None:
    with configured("single"):
        response = Client().get("/whoami", headers={"X-Tenant-ID": "globex"})
        assert response.status_code == 200 and response.json()["tenant"] == "acme"


def test_single_defaults_to_the_default_tenant() -> None:
    container = Container(Config.load({}, {}))
    try:
        tenant = container.tenant()
        assert tenant.adapter_name == "single"
        assert tenant.tenant_id == "default"
    finally:
        container.close()


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"adapter": "single", "options": {"id": "not valid!"}}, "id"),
        ({"adapter": "single", "options": {"id": "acme", "allowed": ["globex"]}}, "id"),
        ({"adapter": "header", "options": {"subdomain_regex": "(unclosed"}}, "subdomain_regex"),
        ({"adapter": "header", "options": {"subdomain_regex": r"^\w+\.test$"}}, "subdomain_regex"),
        ({"adapter": "header", "options": {"allowed": ["ok", "not ok"]}}, "allowed"),
        ({"adapter": "header", "options": {"header": "X Tenant"}}, "header"),
    ],
)
def test_bad_options_fail_the_open_naming_the_field(block: dict, field: str) -> None:
    container = Container(Config.load({"tenant": block}, {}))
    try:
        with pytest.raises(InvalidOptionsError) as caught:
            container.tenant()
        assert caught.value.field == field
        assert f'tenant.default: option "{field}"' in str(caught.value)
        for value in ("not valid!", "(unclosed", "not ok", "X Tenant"):
            assert value not in str(caught.value)
    finally:
        container.close()


def test_unknown_option_is_refused_with_a_suggestion() -> None:
    with pytest.raises(Exception) as caught:
        Config.load({"tenant": {"adapter": "header", "options": {"headr": "X"}}}, {})
    assert 'did you mean "header"' in str(caught.value)


def test_the_subdomain_alias_is_the_header_adapter() -> None:
    container = Container(
        Config.load({"tenant": {"adapter": "subdomain", "options": {"allowed": ["a"]}}}, {})
    )
    try:
        assert container.tenant().adapter_name == "header"
    finally:
        container.close()


def test_middleware_follows_a_toolkit_change() -> None:
    with configured("header"):
        assert Client().get("/whoami", headers={"X-Tenant-ID": "acme"}).status_code == 200
    with configured("header", allowed=["globex"]):
        refused(Client().get("/whoami", headers={"X-Tenant-ID": "acme"}), "unknown")
        assert services.tenant().allowed == frozenset({"globex"})

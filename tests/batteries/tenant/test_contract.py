"""One contract, every tenant adapter: resolution, the rules, the middleware (sync/async)."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from toolkit_batteries.tenant import Tenant, TenantError, current_tenant, using_tenant

from .conftest import Opened, asgi_get


class TestTenantContract:
    def test_is_the_battery_class_with_its_adapter_name(self, opened: Opened) -> None:
        assert isinstance(opened.tenant, Tenant)
        expected = "single" if opened.variant == "single" else "header"
        assert opened.tenant.adapter_name == expected

    def test_resolves_each_known_tenant(self, opened: Opened) -> None:
        for tenant in opened.known:
            assert opened.tenant.resolve(opened.request_for(tenant)) == tenant

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            (None, "required"),
            ("", "required"),
            ("../etc", "malformed"),
            ("a b", "malformed"),
            ("-leading", "malformed"),
            ("x" * 64, "malformed"),
            ("acme:1", "malformed"),
            ("initech", "unknown"),
        ],
    )
    def test_check_refuses_missing_malformed_and_unknown_ids(
        self, opened: Opened, value: str | None, reason: str
    ) -> None:
        with pytest.raises(TenantError) as caught:
            opened.tenant.check(value)
        assert caught.value.reason == reason
        assert caught.value.code == "invalid_argument"
        if value:
            assert value not in str(caught.value)

    def test_check_accepts_a_known_id(self, opened: Opened) -> None:
        assert opened.tenant.check("acme") == "acme"

    def test_middleware_sets_request_tenant_and_the_current_tenant(self, opened: Opened) -> None:
        client = Client()
        for tenant in opened.known:
            response = client.get("/whoami", **opened.headers_for(tenant))
            assert response.status_code == 200, response.content
            body = response.json()
            assert body["tenant"] == tenant
            assert body["current"] == tenant
            assert body["prefix"] == f"media/{tenant}"
        assert current_tenant() is None  # reset once the response is out

    def test_async_middleware_sets_the_tenant_for_an_async_view(self, opened: Opened) -> None:
        for tenant in opened.known:
            status, content = async_to_sync(asgi_get)("/awhoami", opened.raw_headers(tenant))
            assert status == 200, content
            body = json.loads(content)
            assert body["tenant"] == tenant and body["current"] == tenant
        assert current_tenant() is None

    def test_async_stack_carries_the_tenant_into_a_sync_view(self, opened: Opened) -> None:
        status, content = async_to_sync(asgi_get)("/whoami", opened.raw_headers("acme"))
        assert status == 200, content
        assert json.loads(content)["current"] == "acme"

    def test_health_probes_are_exempt(self, opened: Opened) -> None:
        response = Client().get("/healthz")
        assert response.status_code == 200
        assert response.json() == {"tenant": None}

    def test_current_tenant_does_not_leak_from_a_using_block(self, opened: Opened) -> None:
        with using_tenant("globex"):
            response = Client().get("/whoami", **opened.headers_for("acme"))
            assert response.json()["current"] == "acme"
            assert current_tenant() == "globex"
        assert current_tenant() is None

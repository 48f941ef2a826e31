"""One contract, both router adapters: the same URLconf, served in the adapter's protocol."""

from __future__ import annotations

import json
import types

import pytest
from django.http import HttpResponse
from django.test import override_settings
from django.urls import path, reverse

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.router import ASGI_WORKER, Router, serves_asgi

from .conftest import serve

PROTOCOL = {"stdhttp": "wsgi", "router_a": "asgi"}


class TestRouterContract:
    def test_is_the_battery_class_with_its_protocol(self, opened: Router) -> None:
        assert isinstance(opened, Router)
        assert opened.protocol == PROTOCOL[opened.adapter_name]
        assert opened.is_asgi is (opened.protocol == "asgi")
        expected_worker = ASGI_WORKER if opened.is_asgi else None
        assert opened.worker_class == expected_worker

    def test_serves_the_urlconf(self, opened: Router) -> None:
        status, body = serve(opened, "/healthz")
        assert status == 200
        assert json.loads(body)["status"] == "ok"
        assert serve(opened, "/no-such-route")[0] == 404

    def test_app_name_defaults_to_app(self, opened: Router) -> None:
        assert opened.app_name == "app"
        assert opened.describe()["app_name"] == "app"

    def test_include_namespaces_routes_under_app_name(self, opened: Router) -> None:
        urlconf = types.ModuleType(f"urls_{opened.adapter_name}")
        inner = [path("invoice/<int:pk>", lambda request, pk: HttpResponse(), name="invoice")]
        urlconf.urlpatterns = [path("shop/", opened.include(inner))]  # type: ignore[attr-defined]
        assert reverse("app:invoice", kwargs={"pk": 7}, urlconf=urlconf) == "/shop/invoice/7"

    def test_serve_asks_the_same_adapter(self, opened: Router) -> None:
        block = {"router": {"adapter": opened.adapter_name}}
        assert serves_asgi(block) is opened.is_asgi

    def test_application_named_in_settings_wins(self, opened: Router) -> None:
        module = "tests.batteries.router.applications"
        with override_settings(
            WSGI_APPLICATION=f"{module}.wsgi_application",
            ASGI_APPLICATION=f"{module}.asgi_application",
        ):
            app = opened.application()
            assert app.marker == f"named-{opened.protocol}"
            assert opened.describe()["application"].endswith(f"{opened.protocol}_application")
            assert serve(opened, "/healthz")[0] == 200


@pytest.mark.parametrize("adapter", ["stdhttp", "router_a"])
def test_app_name_is_configurable_and_namespaces_include(adapter: str) -> None:
    block = {"router": {"adapter": adapter, "options": {"app_name": "shop"}}}
    container = Container(Config.load(block, {}))
    try:
        router = container.router()
        urlconf = types.ModuleType(f"urls_shop_{adapter}")
        inner = [path("cart", lambda request: HttpResponse(), name="cart")]
        urlconf.urlpatterns = [path("", router.include(inner))]  # type: ignore[attr-defined]
        assert router.app_name == "shop"
        assert reverse("shop:cart", urlconf=urlconf) == "/cart"
    finally:
        container.close()

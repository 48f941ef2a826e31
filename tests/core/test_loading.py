"""resolve_adapter: battery tables, aliases, dotted paths, base classes, errors."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.core import fakes
from tests.core.fakes import fake_module, no_batteries, path  # noqa: F401 - fixture
from toolkit_batteries.core import catalog, loading
from toolkit_batteries.core.adapter import OpenContext, Service
from toolkit_batteries.core.errors import (
    MissingExtraError,
    UnknownAdapterError,
    UnknownServiceError,
)
from toolkit_batteries.core.loading import VENDOR_ALIASES, resolve_adapter

pytestmark = pytest.mark.usefixtures("no_batteries")


class FakeBase(Service):
    """Stands in for a battery's interface."""

    service_name = "geo"

    @classmethod
    def open(cls, ctx: OpenContext) -> FakeBase:
        return cls()


class StaticGeo(FakeBase):
    pass


class RemoteGeo(FakeBase):
    pass


def install(
    monkeypatch: pytest.MonkeyPatch,
    service: str,
    adapters: dict[str, str],
    *,
    aliases: dict[str, str] | None = None,
    base: Any = None,
    base_module: dict[str, Any] | None = None,
    **classes: type,
) -> None:
    """Install a fake ``toolkit_batteries.<service>.adapters`` (and ``.base``) module."""
    name = f"toolkit_batteries.{service}.adapters"
    attributes: dict[str, Any] = {"ADAPTERS": adapters, **classes}
    if aliases is not None:
        attributes["ALIASES"] = aliases
    if base is not None:
        attributes["BASE_CLASS"] = base
    monkeypatch.setitem(sys.modules, name, fake_module(name, **attributes))
    base_name = f"toolkit_batteries.{service}.base"
    monkeypatch.setitem(sys.modules, base_name, fake_module(base_name, **(base_module or {})))
    loading.clear_cache()


def here(name: str) -> str:
    return f"{__name__}.{name}"


def geo_table(monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> None:
    install(
        monkeypatch,
        "geo",
        {"static": here("StaticGeo"), "geo_a": here("RemoteGeo"), "geo_b": here("RemoteGeo")},
        **kwargs,
    )


def test_canonical_name_resolves_ignoring_case(monkeypatch: pytest.MonkeyPatch) -> None:
    geo_table(monkeypatch)
    assert resolve_adapter("geo", "static") == ("static", StaticGeo)
    assert resolve_adapter("geo", "STATIC") == ("static", StaticGeo)
    assert resolve_adapter("geo", " Geo_A ") == ("geo_a", RemoteGeo)


def test_vendor_alias_resolves_to_the_canonical_name(monkeypatch: pytest.MonkeyPatch) -> None:
    geo_table(monkeypatch)
    assert resolve_adapter("geo", "google") == ("geo_a", RemoteGeo)
    assert resolve_adapter("geo", "OSM") == ("geo_b", RemoteGeo)


def test_vendor_alias_exists_only_where_its_target_does(monkeypatch: pytest.MonkeyPatch) -> None:
    geo_table(monkeypatch)
    with pytest.raises(UnknownAdapterError) as caught:
        resolve_adapter("geo", "redis")
    assert "redis" not in caught.value.available


def test_stripe_and_paddle_pick_the_battery_s_own_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(
        monkeypatch,
        "billing",
        {
            "stub": path("RecordingAdapter"),
            "billing_a": path("RecordingAdapter"),
            "billing_b": path("NoCloseAdapter"),
        },
    )
    install(
        monkeypatch,
        "payment",
        {
            "stub": path("RecordingAdapter"),
            "payment_a": path("RecordingAdapter"),
            "payment_b": path("NoCloseAdapter"),
        },
    )
    assert resolve_adapter("billing", "stripe")[0] == "billing_a"
    assert resolve_adapter("payment", "stripe")[0] == "payment_a"
    assert resolve_adapter("payment", "paddle") == ("payment_b", fakes.NoCloseAdapter)


def test_vendor_alias_table_covers_design_names() -> None:
    expected = {
        "redis": "kvserver", "postgres": "sqlserver", "postgresql": "sqlserver",
        "sqlite": "sqlfile", "sqlite3": "sqlfile", "s3": "objstore", "r2": "objstore_b",
        "pgvector": "sqlvector", "qdrant": "vecengine", "meilisearch": "searchengine",
        "vault": "secretstore", "anthropic": "llm_a", "openai": "llm_b", "gemini": "llm_c",
        "openrouter": "llm_d", "posthog": "analytics_b", "cloudflare": "cdn_a",
        "google": "geo_a", "osm": "geo_b", "firebase": "remotecfg", "twilio": "sms",
        "fcm": "push", "zerolog": "log_b", "fiber": "router_a", "casbin": "policyfile",
    }  # fmt: skip
    derived = {alias: targets[0] for alias, targets in VENDOR_ALIASES.items()}
    # every DESIGN.md name is there; products added later to the catalog may join them
    assert {**expected, "stripe": "billing_a", "paddle": "billing_b"}.items() <= derived.items()
    assert VENDOR_ALIASES["stripe"] == ("billing_a", "payment_a")
    # the table is derived from the catalog's products, the one list
    assert catalog.product_aliases() == VENDOR_ALIASES
    for spec in catalog.SERVICES.values():
        for adapter, products in spec.products.items():
            assert all(adapter in VENDOR_ALIASES[product] for product in products)


def test_battery_alias_table(monkeypatch: pytest.MonkeyPatch) -> None:
    geo_table(monkeypatch, aliases={"Fixed": "static", "dangling": "nowhere"})
    assert resolve_adapter("geo", "fixed") == ("static", StaticGeo)
    with pytest.raises(UnknownAdapterError):
        resolve_adapter("geo", "dangling")


def test_adapter_paths_builds_a_table_from_one_line() -> None:
    """A battery writes each adapter once: ``module.Class``, ``name=`` where they differ."""
    table = loading.adapter_paths("pkg.adapters", "memory.M kvserver=redis_mod.R sql=memory.S")
    assert list(table.items()) == [
        ("memory", "pkg.adapters.memory.M"),
        ("kvserver", "pkg.adapters.redis_mod.R"),
        ("sql", "pkg.adapters.memory.S"),
    ]
    for wrong in ("memory", "a=b", "memory.M memory.N", "=memory.M"):
        with pytest.raises(ValueError, match="is not"):
            loading.adapter_paths("pkg.adapters", wrong)


def test_dotted_path_resolves_any_class_with_open() -> None:
    assert resolve_adapter("cache", path("RecordingAdapter")) == (
        path("RecordingAdapter"),
        fakes.RecordingAdapter,
    )


def test_dotted_path_of_a_table_entry_reports_the_canonical_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    geo_table(monkeypatch)
    assert resolve_adapter("geo", here("StaticGeo")) == ("static", StaticGeo)


def test_unknown_name_lists_available_names_and_suggests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    geo_table(monkeypatch)
    with pytest.raises(UnknownAdapterError) as caught:
        resolve_adapter("geo", "statik")
    error = caught.value
    assert error.service == "geo"
    assert error.adapter == "statik"
    assert 'did you mean "static"' in str(error)
    assert "available: geo_a, geo_b, google, nominatim, osm, static" in str(error)
    assert error.available == ("geo_a", "geo_b", "google", "nominatim", "osm", "static")


def test_battery_without_adapters_module_has_an_empty_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes the import fail as a missing module does.
    monkeypatch.setitem(sys.modules, "toolkit_batteries.geo.adapters", None)
    loading.clear_cache()
    assert loading.adapter_table("geo").adapters == {}
    with pytest.raises(UnknownAdapterError, match=r"available: none yet"):
        resolve_adapter("geo", "static")


def test_optional_module_is_none_only_for_the_missing_module_itself() -> None:
    assert loading._optional_module("toolkit_batteries.geo.nonexistent_module") is None
    assert loading._optional_module("toolkit_batteries_nonexistent.adapters") is None
    with pytest.raises(ModuleNotFoundError, match="toolkit_test_missing_vendor_sdk"):
        loading._optional_module("tests.core.fakes_broken")


def test_import_error_inside_an_adapter_module_propagates() -> None:
    with pytest.raises(ModuleNotFoundError, match="toolkit_test_missing_vendor_sdk"):
        resolve_adapter("geo", "tests.core.fakes_broken.BrokenAdapter")


def test_missing_extra_error_propagates() -> None:
    with pytest.raises(MissingExtraError, match=r'pip install "django-toolkit\[geo\]"'):
        resolve_adapter("geo", "tests.core.fakes_extra.Anything")


def test_dotted_path_to_nothing_is_an_unknown_adapter() -> None:
    with pytest.raises(UnknownAdapterError, match=r'no module named "tests\.core\.nowhere"'):
        resolve_adapter("cache", "tests.core.nowhere.Adapter")
    with pytest.raises(UnknownAdapterError, match='has no attribute "Missing"'):
        resolve_adapter("cache", path("Missing"))


def test_class_without_open_is_refused() -> None:
    with pytest.raises(UnknownAdapterError, match=r"not a class with open\(ctx\)"):
        resolve_adapter("cache", path("NotAnAdapter"))
    with pytest.raises(UnknownAdapterError, match=r"not a class with open\(ctx\)"):
        resolve_adapter("cache", path("plugin_factory"))


def test_base_class_from_adapters_module_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    geo_table(monkeypatch, base=FakeBase)
    assert resolve_adapter("geo", "static")[1] is StaticGeo
    with pytest.raises(UnknownAdapterError, match=r"is not a subclass of .*FakeBase"):
        resolve_adapter("geo", path("RecordingAdapter"))


def test_base_class_as_dotted_path_in_base_module(monkeypatch: pytest.MonkeyPatch) -> None:
    geo_table(monkeypatch, base_module={"BASE_CLASS": here("FakeBase")})
    assert loading.adapter_table("geo").base is FakeBase
    with pytest.raises(UnknownAdapterError, match="is not a subclass"):
        resolve_adapter("geo", path("RecordingAdapter"))


def test_base_class_inferred_from_the_base_module(monkeypatch: pytest.MonkeyPatch) -> None:
    module = "toolkit_batteries.geo.base"
    root = type("Geocoder", (Service,), {"service_name": "geo", "__module__": module})
    child = type("CachingGeocoder", (root,), {"__module__": module})
    other = type("Unrelated", (Service,), {"service_name": "cache", "__module__": module})
    geo_table(
        monkeypatch,
        base_module={
            "Geocoder": root,
            "CachingGeocoder": child,
            "Unrelated": other,
            "Svc": Service,
        },
    )
    assert loading.adapter_table("geo").base is root


def test_unknown_service() -> None:
    with pytest.raises(UnknownServiceError, match='did you mean "cache"'):
        resolve_adapter("cahce", "memory")


def test_resolutions_are_cached_until_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    geo_table(monkeypatch)
    first = resolve_adapter("geo", "static")
    install(monkeypatch, "geo", {"static": here("RemoteGeo")})  # clears the cache
    assert resolve_adapter("geo", "static") == ("static", RemoteGeo) != first
    monkeypatch.setitem(
        sys.modules,
        "toolkit_batteries.geo.adapters",
        fake_module("toolkit_batteries.geo.adapters", ADAPTERS={"static": here("StaticGeo")}),
    )
    assert resolve_adapter("geo", "static") == ("static", RemoteGeo)  # still cached

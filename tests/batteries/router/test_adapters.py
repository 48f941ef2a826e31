"""Router specifics: aliases, bad options, the missing extra, and the checks."""

from __future__ import annotations

import pytest

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError
from toolkit_batteries.router import serves_asgi
from toolkit_batteries.router.adapters import router_a


def open_router(block: dict):
    container = Container(Config.load({"router": block}, {}))
    try:
        return container.router()
    finally:
        container.close()


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("fiber", "router_a"), ("asgi", "router_a"), ("wsgi", "stdhttp"), ("STDHTTP", "stdhttp")],
)
def test_aliases(name: str, canonical: str) -> None:
    assert open_router({"adapter": name}).adapter_name == canonical


def test_default_is_stdhttp_and_serve_stays_on_wsgi() -> None:
    assert open_router({}).adapter_name == "stdhttp"
    assert serves_asgi({}) is False


def test_environment_picks_the_adapter_for_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROUTER__DEFAULT__ADAPTER", "router_a")
    assert serves_asgi({}) is True
    # The environment overrides settings, as for every service.
    assert serves_asgi({"router": {"adapter": "stdhttp"}}) is True


@pytest.mark.parametrize("bad", ["a:b", "has space", "9starts-with-digit"])
def test_bad_app_name_fails_the_open_naming_the_field(bad: str) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        open_router({"adapter": "stdhttp", "options": {"app_name": bad}})
    assert caught.value.field == "app_name"
    assert bad not in str(caught.value)


def test_router_a_without_the_workers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(router_a, "find_spec", lambda name: None)
    with pytest.raises(MissingExtraError) as caught:
        open_router({"adapter": "router_a"})
    assert 'pip install "django-toolkit[asgi]"' in str(caught.value)
    found = service_checks("router", Config.load({"router": {"adapter": "router_a"}}, {}))
    assert [m.id for m in found] == ["toolkit_router.E003"]


def test_checks() -> None:
    assert service_checks("router", Config.load({"router": {"adapter": "router_a"}}, {})) == []
    found = service_checks("router", Config.load({"router": {"options": {"app_name": "x:y"}}}, {}))
    assert [m.id for m in found] == ["toolkit_router.E002"]
    assert "x:y" not in found[0].msg

"""Plugins: the process registry's rules and Container.plugin()."""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType

import pytest

from tests.core import fakes
from tests.core.fakes import EVENTS, config, no_batteries, path  # noqa: F401 - fixture
from toolkit_batteries.core import plugins
from toolkit_batteries.core.container import Container, ContainerClosedError
from toolkit_batteries.core.errors import (
    ServiceUnavailableError,
    UnknownAdapterError,
    UnknownServiceError,
)
from toolkit_batteries.core.plugins import PluginRegistrationError, register_plugin

pytestmark = pytest.mark.usefixtures("no_batteries")


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    before = set(plugins._factories)
    yield
    for key in set(plugins._factories) - before:
        plugins.unregister_plugin(key)


def sms_config(adapter: str = "acme_sms", **options: object):
    return config(plugins={"sms": {"adapter": adapter, "options": dict(options)}})


# ------------------------------------------------------------------ registration rules


def test_register_rejects_a_version_mismatch() -> None:
    with pytest.raises(PluginRegistrationError, match="api_version 2 is not supported"):
        register_plugin("acme_sms", fakes.plugin_factory, api_version=2)
    assert plugins.plugin_factory("acme_sms") is None


@pytest.mark.parametrize("name", ["", "   ", None])
def test_register_rejects_an_empty_name(name: object) -> None:
    with pytest.raises(PluginRegistrationError, match="non-empty"):
        register_plugin(name, fakes.plugin_factory)  # type: ignore[arg-type]


def test_register_rejects_a_factory_that_is_not_callable() -> None:
    with pytest.raises(PluginRegistrationError, match="not callable"):
        register_plugin("acme_sms", "tests.core.fakes.plugin_factory")  # type: ignore[arg-type]


def test_re_registering_another_factory_fails_the_same_one_is_a_no_op() -> None:
    register_plugin("acme_sms", fakes.plugin_factory)
    register_plugin("acme_sms", fakes.plugin_factory)
    register_plugin("ACME_SMS", fakes.plugin_factory)
    with pytest.raises(PluginRegistrationError, match="already registered"):
        register_plugin("Acme_Sms", fakes.RecordingAdapter.open)
    assert plugins.plugin_factory("acme_sms") is fakes.plugin_factory
    assert "acme_sms" in plugins.registered_plugins()


def test_registration_errors_are_toolkit_and_value_errors() -> None:
    assert issubclass(PluginRegistrationError, ValueError)
    assert PluginRegistrationError.code == "plugin_registration"


# ------------------------------------------------------------------ resolution


def test_registered_factory_gets_a_context_with_raw_options() -> None:
    register_plugin("acme_sms", fakes.plugin_factory)
    c = Container(sms_config(token="t0ken", retries=3))
    sms = c.plugin("sms")
    ctx = sms.ctx
    assert (ctx.service, ctx.instance, ctx.adapter) == ("sms", "default", "acme_sms")
    assert isinstance(ctx.options, MappingProxyType)
    assert dict(ctx.options) == {"token": "t0ken", "retries": 3}
    assert ctx.container is c
    assert c.opened() == (("plugins.sms", "default"),)


def test_registered_name_matches_ignoring_case() -> None:
    register_plugin("acme_sms", fakes.plugin_factory)
    c = Container(sms_config(adapter="ACME_SMS"))
    assert isinstance(c.plugin("sms"), fakes.RecordingAdapter)


def test_plugin_is_lazy_cached_and_closed_with_the_container() -> None:
    register_plugin("acme_sms", fakes.plugin_factory)
    c = Container(sms_config())
    assert EVENTS == []
    sms = c.plugin("sms")
    assert c.plugin("sms") is sms
    c.close()
    assert EVENTS == [("open", "sms", "default"), ("close", "sms", "default")]
    with pytest.raises(ContainerClosedError, match=r"plugins\.sms\.default"):
        c.plugin("sms")


def test_plugin_failure_is_not_cached() -> None:
    register_plugin("flaky_sms", fakes.FlakyAdapter.open)
    c = Container(sms_config(adapter="flaky_sms"))
    with pytest.raises(ServiceUnavailableError):
        c.plugin("sms")
    assert isinstance(c.plugin("sms"), fakes.FlakyAdapter)


def test_plugin_by_dotted_path_to_a_class_with_open() -> None:
    c = Container(sms_config(adapter=path("RecordingAdapter")))
    assert isinstance(c.plugin("sms"), fakes.RecordingAdapter)


def test_plugin_by_dotted_path_to_a_function() -> None:
    c = Container(sms_config(adapter=path("plugin_factory")))
    assert c.plugin("sms").ctx.adapter == path("plugin_factory")


def test_plugin_dependencies_close_after_the_plugin() -> None:
    register_plugin("needs_db", fakes.NeedsDBAdapter.open)
    c = Container(
        config(db={"adapter": path("RecordingAdapter")}, plugins={"sms": {"adapter": "needs_db"}})
    )
    c.plugin("sms")
    c.close()
    assert [e for e in EVENTS if e[0] == "close"] == [
        ("close", "sms", "default"),
        ("close", "db", "default"),
    ]


def test_unknown_plugin_adapter_lists_the_registered_ones() -> None:
    register_plugin("acme_sms", fakes.plugin_factory)
    c = Container(sms_config(adapter="acme_smss"))
    with pytest.raises(UnknownAdapterError, match=r'did you mean "acme_sms"'):
        c.plugin("sms")


def test_unknown_dotted_plugin_path_fails() -> None:
    c = Container(sms_config(adapter="tests.core.fakes.Nope"))
    with pytest.raises(UnknownAdapterError, match='has no attribute "Nope"'):
        c.plugin("sms")


def test_unconfigured_plugin_name_fails() -> None:
    c = Container(sms_config())
    with pytest.raises(UnknownServiceError):
        c.plugin("push")

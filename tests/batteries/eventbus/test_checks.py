"""The eventbus app, its checks, and opening from configuration."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.checks import battery_messages
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.eventbus.adapters.memory import MemoryEventBus


def eventbus_messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_eventbus")


@pytest.mark.parametrize(
    ("toolkit", "expected"),
    [
        ({}, []),
        ({"eventbus": {"options": {"buffer_size": -1}}}, ["toolkit_eventbus.E002"]),
        ({"eventbus": {"options": {"close_timeout": "-1s"}}}, ["toolkit_eventbus.E002"]),
        (
            {
                "eventbus": {
                    "adapter": "kvserver",
                    "options": {"kvserver": {"url": "redis://x"}},
                }
            },
            ["toolkit_eventbus.W001"],
        ),
        ({"eventbus": {"adapter": "nats"}}, ["toolkit_eventbus.E001"]),
    ],
)
def test_checks(toolkit, expected):
    with override_settings(TOOLKIT=toolkit):
        assert [m.id for m in eventbus_messages()] == expected


def test_defaults_open_the_memory_adapter_with_the_spec_values():
    container = Container(Config.load({}, {}))
    bus = container.eventbus()
    assert isinstance(bus, MemoryEventBus)
    assert (bus.settings.buffer_size, bus.settings.max_handlers) == (1024, 128)
    assert (bus.settings.handler_timeout, bus.settings.close_timeout) == (30.0, 5.0)
    container.close()
    assert bus.closed


def test_invalid_values_fail_the_open_naming_the_field_only():
    container = Container(Config.load({"eventbus": {"options": {"max_handlers": -7}}}, {}))
    with pytest.raises(InvalidOptionsError, match='option "max_handlers"') as caught:
        container.eventbus()
    assert "-7" not in str(caught.value)

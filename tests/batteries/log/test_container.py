"""Selecting and configuring the log service through settings, environment and container."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import UnknownAdapterError
from toolkit_batteries.log import Logger
from toolkit_batteries.log.adapters import ADAPTERS
from toolkit_batteries.log.adapters.log_b import JSONLogger
from toolkit_batteries.log.adapters.pretty import PrettyLogger
from toolkit_batteries.log.adapters.slog import SlogLogger


def test_the_default_is_slog_at_debug() -> None:
    log = Container(Config.load({}, {})).log()
    assert isinstance(log, SlogLogger) and log.min_level == 0


def test_settings_select_adapter_and_level() -> None:
    container = Container(
        Config.load({"log": {"adapter": "log_b", "options": {"min_level": 1}}}, {})
    )
    log = container.log()
    assert isinstance(log, JSONLogger) and log.min_level == 1
    assert container.log() is log


def test_zerolog_is_an_alias_of_log_b() -> None:
    log = Container(Config.load({"log": {"adapter": "zerolog"}}, {})).log()
    assert type(log) is JSONLogger and log.adapter_name == "log_b"


def test_environment_selects_adapter_and_level() -> None:
    environ = {"LOG__DEFAULT__ADAPTER": "pretty", "LOG__DEFAULT__MIN_LEVEL": "3"}
    log = Container(Config.load({}, environ)).log()
    assert isinstance(log, PrettyLogger) and log.min_level == 3


def test_named_instances_are_independent() -> None:
    settings = {
        "log": {
            "default": {"adapter": "slog"},
            "audit": {"adapter": "log_b", "options": {"min_level": 2}},
        }
    }
    container = Container(Config.load(settings, {}))
    assert isinstance(container.log(), SlogLogger)
    audit = container.log("audit")
    assert isinstance(audit, JSONLogger) and audit.min_level == 2


def test_an_unknown_adapter_suggests_the_closest_name() -> None:
    with pytest.raises(UnknownAdapterError, match='did you mean "pretty"'):
        Container(Config.load({"log": {"adapter": "prety"}}, {})).log()


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_every_adapter_opens_and_closes(name: str) -> None:
    container = Container(Config.load({"log": {"adapter": name}}, {}))
    log = container.log()
    assert isinstance(log, Logger) and log.adapter_name == name
    container.close()


def test_services_registry_follows_settings(capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit_batteries import services

    with override_settings(TOOLKIT={"log": {"adapter": "log_b", "options": {"min_level": 1}}}):
        log = services.log()
        log.debug("dropped")
        log.info("kept", password="p4ss")
        assert isinstance(log, JSONLogger)
    assert isinstance(services.log(), SlogLogger)  # rebuilt when the override ends
    err = capsys.readouterr().err
    assert [json.loads(line)["message"] for line in err.splitlines()] == ["kept"]
    assert "p4ss" not in err

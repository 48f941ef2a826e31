"""The ``stdout`` adapter's line format and sampling, the app, and the system checks."""

from __future__ import annotations

import json
import logging

import pytest
from django.core import checks

from tests.support.checks import assert_checks, battery_messages
from tests.support.processes import python_prints
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .conftest import SECRET


def test_stdout_lines_are_json_with_service_and_instance(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolkit.observability")
    block = {"edge": {"options": {"service_name": "shop", "verbose": True}}}
    container = Container(Config.load({"observability": block}, {}))
    obs = container.observability("edge")
    assert obs.adapter_name == "stdout"  # the default adapter
    with obs.span("checkout", items=2):
        pass
    obs.add("orders", 1, kind="web")
    container.close()
    span, metric = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert span["kind"] == "span" and span["name"] == "checkout"
    assert (span["service.name"], span["toolkit.instance"]) == ("shop", "edge")
    assert span["attributes"] == {"items": 2} and span["duration_ms"] >= 0
    assert metric == {
        "kind": "metric",
        "type": "counter",
        "name": "orders",
        "value": 1,
        "service.name": "shop",
        "toolkit.instance": "edge",
        "attributes": {"kind": "web"},
    }
    assert "checkout" in caplog.text  # verbose mirrors the lines at DEBUG


def test_stdout_sample_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    block = {"adapter": "stdout", "options": {"sample_ratio": 1e-12}}
    container = Container(Config.load({"observability": block}, {}))
    obs = container.observability()
    for _ in range(50):
        with obs.span("rare"), obs.span("rare.child") as child:
            child.set_attribute("ignored", True)
    container.close()
    assert capsys.readouterr().out == ""


def test_sample_ratio_outside_the_unit_interval_is_refused() -> None:
    with pytest.raises(Exception) as info:
        Config.load({"observability": {"options": {"sample_ratio": 1.5}}}, {})
    assert "sample_ratio" in str(info.value)


def test_importing_the_battery_imports_no_opentelemetry() -> None:
    code = (
        "import sys, toolkit_batteries.observability, "
        "toolkit_batteries.observability.options, "
        "toolkit_batteries.observability.adapters.stdout, "
        "toolkit_batteries.observability.adapters.noop;"
        "print(any(m.startswith('opentelemetry') for m in sys.modules))"
    )
    assert python_prints(code) == "False"


def messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_observability")


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({}, []),
        ({"adapter": "noop"}, []),
        ({"adapter": "otlp", "options": {"endpoint": "collector:4318"}}, []),
        ({"adapter": "otlp", "options": {"endpoint": "127.0.0.1:4318", "insecure": True}}, []),
        ({"adapter": "otlp"}, ["toolkit_observability.E002"]),
        (
            {"adapter": "otlp", "options": {"endpoint": "collector:4318", "insecure": True}},
            ["toolkit_observability.E002"],
        ),
        (
            {"adapter": "otlp", "options": {"endpoint": f"https://u:{SECRET}@collector"}},
            ["toolkit_observability.E002"],
        ),
        (
            {"adapter": "otlp", "options": {"endpoint": "c:4318", "key_file": "/k.pem"}},
            ["toolkit_observability.E002"],
        ),
        (
            {"adapter": "stdout", "options": {"headers": {"authorization": SECRET}}},
            ["toolkit_observability.W001"],
        ),
        ({"adapter": "jaeger"}, ["toolkit_observability.E001"]),
    ],
)
def test_checks(block: dict, expected: list[str]) -> None:
    assert_checks("observability", block, expected, secret=SECRET)

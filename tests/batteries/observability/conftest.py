"""Open the observability battery the real way (configuration, then a Container).

``otlp`` exports to a receiver this module starts on 127.0.0.1 (see ``receiver.py``);
``stdout`` is read back from the captured standard output; ``noop`` emits nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.batteries import BatteryOpener
from toolkit_batteries.core.container import Container

from .receiver import Receiver

VARIANTS = ("stdout", "noop", "otlp")

#: A header value that must reach the receiver and never a log line.
SECRET = "sk-otlp-6f1d0c7e-never-log-me"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """Yield a strict OTLP/HTTP receiver; then assert every export it took was well-formed."""
    with Receiver() as found:
        yield found  # type: ignore[misc]
    assert found.problems == [], "an export broke OTLP's requirements"


def otlp_options(receiver: Receiver, **options: Any) -> dict[str, Any]:
    return {
        "endpoint": receiver.url,
        "insecure": True,
        "service_name": "orders",
        "headers": {"x-api-key": SECRET},
        **options,
    }


@dataclass
class Opened:
    """An opened observability service and a way to read back what it emitted."""

    variant: str
    obs: Any
    container: Container
    capsys: pytest.CaptureFixture[str]
    receiver: Receiver | None

    @property
    def exports(self) -> bool:
        return self.variant != "noop"

    def spans(self) -> list[dict[str, Any]]:
        """Finished spans so far, as dicts with name, ids, attributes and resource."""
        if self.variant == "otlp":
            assert self.obs.flush(5.0)
            return self.receiver.spans()  # type: ignore[union-attr]
        lines = [json.loads(line) for line in self.capsys.readouterr().out.splitlines()]
        self._lines = getattr(self, "_lines", []) + lines
        return [
            {
                **line,
                "resource": {
                    "service.name": line["service.name"],
                    "toolkit.instance": line["toolkit.instance"],
                },
            }
            for line in self._lines
            if line.get("kind") == "span"
        ]


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> Opened:
    found = None
    if request.param == "otlp":
        found = request.getfixturevalue("receiver")
        options = otlp_options(found)
    else:
        options = {"service_name": "orders"}
    block = {"adapter": request.param, "options": options}
    # Opened after the receiver, so the container is closed (and flushed) before it stops.
    open_battery: BatteryOpener = request.getfixturevalue("open_battery")
    obs = open_battery("observability", block)
    return Opened(request.param, obs, open_battery.last, capsys, found)

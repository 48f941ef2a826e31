"""Open log adapters the real way (through a Container) and read back what they wrote.

Each adapter gets a *capture*: it opens the adapter from configuration and turns its output
(stderr for ``log_b`` and ``pretty``, log records for ``slog``) back into :class:`Entry`
rows, so one contract suite can hold every adapter to the same behaviour.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.log import LEVELS, Logger
from toolkit_batteries.log.adapters.slog import logfmt
from toolkit_batteries.log.base import STDLIB_LEVELS

ADAPTERS = ("slog", "noop", "log_b", "pretty")


def open_log(adapter: str, min_level: int = 0) -> Logger:
    """Open the ``log`` service as an application would: configuration, then the container."""
    settings = {"log": {"adapter": adapter, "options": {"min_level": min_level}}}
    return Container(Config.load(settings, {})).log()


@dataclass
class Entry:
    """One line an adapter wrote: level number, message, fields (values as text)."""

    level: int
    message: str
    fields: dict[str, str] = field(default_factory=dict)


class Capture:
    """Open one adapter and read back its output."""

    adapter = ""
    #: False for an adapter that is expected to write nothing at all.
    writes = True

    def __init__(self, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture):
        self.capsys = capsys
        self.caplog = caplog
        self._stderr = ""

    def open(self, min_level: int = 0) -> Logger:
        """Open the adapter through the container."""
        return open_log(self.adapter, min_level)

    def output(self) -> str:
        """Return everything the adapter made visible so far, raw."""
        self._stderr += self.capsys.readouterr().err
        records = [r for r in self.caplog.records if r.name.startswith("toolkit")]
        return self._stderr + "".join(f"{r.getMessage()}\n{vars(r)!r}\n" for r in records)

    def entries(self) -> list[Entry]:
        """Return the lines written so far, parsed."""
        raise NotImplementedError


class SlogCapture(Capture):
    adapter = "slog"

    def open(self, min_level: int = 0) -> Logger:
        self.caplog.set_level(logging.DEBUG, logger="toolkit.app")
        return super().open(min_level)

    def entries(self) -> list[Entry]:
        entries = []
        for record in self.caplog.records:
            if record.name != "toolkit.app":
                continue
            text, suffix = record.getMessage(), logfmt(record.fields)
            message = text.removesuffix(f" {suffix}") if suffix else text
            entries.append(
                Entry(STDLIB_LEVELS.index(record.levelno), message, _text(record.fields))
            )
        return entries


class NoopCapture(SlogCapture):
    adapter = "noop"
    writes = False

    def entries(self) -> list[Entry]:
        assert self.output() == "", "noop wrote something"
        return []


class JSONCapture(Capture):
    adapter = "log_b"

    def entries(self) -> list[Entry]:
        rows = [json.loads(line) for line in self.output().splitlines()]
        return [Entry(LEVELS.index(r["level"]), r["message"], _text(r["fields"])) for r in rows]


# "2026-01-02 10:11:12 [warn     ] message                        key=value other=1"
_PRETTY_LINE = re.compile(r"^\S+ \S+ \[(?P<level>\w+)\s*\] (?P<rest>.*)$")
_PRETTY_FIELD = re.compile(r"(\w+)=(\S+)")


class PrettyCapture(Capture):
    adapter = "pretty"

    def entries(self) -> list[Entry]:
        entries = []
        for line in self.output().splitlines():
            match = _PRETTY_LINE.match(line)
            assert match, f"not a pretty line: {line!r}"
            rest = match["rest"]
            first = _PRETTY_FIELD.search(rest)
            message = rest[: first.start()] if first else rest
            fields = dict(_PRETTY_FIELD.findall(rest))
            entries.append(Entry(LEVELS.index(match["level"]), message.strip(), fields))
        return entries


def _text(fields: dict) -> dict[str, str]:
    return {
        key: value if isinstance(value, str) else json.dumps(value) for key, value in fields.items()
    }


CAPTURES = {c.adapter: c for c in (SlogCapture, NoopCapture, JSONCapture, PrettyCapture)}


@pytest.fixture(params=ADAPTERS)
def capture(request, capsys, caplog) -> Capture:
    """Yield a capture for each adapter in turn."""
    return CAPTURES[request.param](capsys, caplog)

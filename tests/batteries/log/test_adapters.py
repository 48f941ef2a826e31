"""What each adapter does beyond the shared contract: its output format."""

from __future__ import annotations

import io
import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog

from toolkit_batteries.log import INFO
from toolkit_batteries.log.adapters.log_b import JSONLogger
from toolkit_batteries.log.adapters.noop import NoopLogger
from toolkit_batteries.log.adapters.pretty import PrettyLogger
from toolkit_batteries.log.adapters.slog import SlogLogger

from .conftest import open_log


class TestJSON:
    def test_each_call_is_one_json_line_with_the_envelope(self) -> None:
        stream = io.StringIO()
        log = JSONLogger(stream=stream)
        log.info(
            "hello", user_id=7, ok=True, ratio=0.5, tags=["a", "b"], meta={"k": "v"}, gone=None
        )
        log.warn("careful")
        text = stream.getvalue()
        assert text.endswith("\n") and text.count("\n") == 2
        first, second = (json.loads(line) for line in text.splitlines())
        assert list(first) == ["timestamp", "level", "message", "fields"]
        assert first["level"] == "info" and first["message"] == "hello"
        assert first["fields"] == {
            "user_id": 7,
            "ok": True,
            "ratio": 0.5,
            "tags": ["a", "b"],
            "meta": {"k": "v"},
            "gone": None,
        }
        assert (second["level"], second["fields"]) == ("warn", {})

    def test_timestamp_is_iso_8601_utc(self) -> None:
        stream = io.StringIO()
        JSONLogger(stream=stream).error("x")
        stamp = json.loads(stream.getvalue())["timestamp"]
        assert stamp.endswith("Z")
        when = datetime.fromisoformat(stamp)
        assert when.utcoffset() == timedelta(0)
        assert abs(datetime.now(UTC) - when) < timedelta(seconds=5)

    def test_fatal_is_named_fatal(self) -> None:
        stream = io.StringIO()
        JSONLogger(stream=stream).fatal("x")
        assert json.loads(stream.getvalue())["level"] == "fatal"

    def test_fields_cannot_overwrite_the_envelope(self) -> None:
        stream = io.StringIO()
        JSONLogger(stream=stream).info("real", level="fake", message="fake", timestamp="fake")
        line = json.loads(stream.getvalue())
        assert (line["level"], line["message"]) == ("info", "real")
        assert line["fields"] == {"level": "fake", "message": "fake", "timestamp": "fake"}

    def test_global_structlog_configuration_does_not_leak_in(self) -> None:
        def explode(*_args: object) -> None:
            raise AssertionError("the global structlog chain was used")

        structlog.configure(processors=[explode])
        try:
            stream = io.StringIO()
            JSONLogger(stream=stream).info("x")
        finally:
            structlog.reset_defaults()
        assert json.loads(stream.getvalue())["message"] == "x"

    def test_container_instance_writes_to_stderr(self, capsys: pytest.CaptureFixture[str]) -> None:
        open_log("zerolog", INFO).info("to stderr")
        captured = capsys.readouterr()
        assert captured.out == ""
        assert json.loads(captured.err)["message"] == "to stderr"


class TestSlog:
    def test_levels_map_to_stdlib_levels(self, caplog: pytest.LogCaptureFixture) -> None:
        caplog.set_level(logging.DEBUG, logger="toolkit.app")
        log = open_log("slog")
        log.debug("d")
        log.info("i")
        log.warning("w")
        log.error("e")
        log.fatal("f")
        assert [r.levelno for r in caplog.records] == [10, 20, 30, 40, 50]
        assert {r.name for r in caplog.records} == {"toolkit.app"}

    def test_fields_are_in_the_message_and_on_the_record(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.DEBUG, logger="toolkit.app")
        open_log("slog").info("hello", user="a b", n=7, ok=True, empty="", pct="5%")
        (record,) = caplog.records
        assert record.getMessage() == 'hello user="a b" n=7 ok=true empty="" pct=5%'
        assert record.fields == {"user": "a b", "n": 7, "ok": True, "empty": "", "pct": "5%"}

    def test_records_point_at_the_caller(self, caplog: pytest.LogCaptureFixture) -> None:
        caplog.set_level(logging.DEBUG, logger="toolkit.app")
        log = open_log("slog")
        log.info("a")
        log.bind(x=1).warn("b")
        assert {Path(r.pathname).name for r in caplog.records} == {Path(__file__).name}
        assert {r.funcName for r in caplog.records} == {"test_records_point_at_the_caller"}

    def test_the_stdlib_logger_level_also_filters(self, caplog: pytest.LogCaptureFixture) -> None:
        caplog.set_level(logging.ERROR, logger="toolkit.app")  # as a LOGGING config would
        log = open_log("slog")
        assert not log.enabled(INFO)
        log.info("dropped")
        log.error("kept")
        assert [r.getMessage() for r in caplog.records] == ["kept"]

    def test_a_logger_name_can_be_given_in_code(self, caplog: pytest.LogCaptureFixture) -> None:
        caplog.set_level(logging.DEBUG, logger="myapp.audit")
        SlogLogger(name="myapp.audit").info("x")
        assert [r.name for r in caplog.records] == ["myapp.audit"]


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


class TestPretty:
    def test_no_colour_codes_when_not_a_tty(self) -> None:
        stream = io.StringIO()
        PrettyLogger(stream=stream).error("plain", code=3)
        text = stream.getvalue()
        assert "\x1b[" not in text
        assert "[error" in text and "plain" in text and "code=3" in text

    def test_colours_on_a_tty(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("NO_COLOR", raising=False)
        stream = _TTY()
        PrettyLogger(stream=stream).fatal("red")
        assert "\x1b[" in stream.getvalue()
        assert "fatal" in stream.getvalue()

    def test_no_color_wins_over_a_tty(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("NO_COLOR", "1")
        stream = _TTY()
        PrettyLogger(stream=stream).info("plain")
        assert "\x1b[" not in stream.getvalue()

    def test_fields_named_like_columns_are_kept(self) -> None:
        stream = io.StringIO()
        PrettyLogger(stream=stream).info("real", event="signup", level="gold")
        text = stream.getvalue()
        assert "[info" in text and "real" in text
        assert "event_=signup" in text and "level_=gold" in text


class TestNoop:
    def test_writes_nothing_anywhere(
        self, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.DEBUG)
        log = open_log("noop")
        log.bind(a=1).fatal("x", password="p")
        assert isinstance(log, NoopLogger)
        assert capsys.readouterr() == ("", "")
        assert caplog.records == []

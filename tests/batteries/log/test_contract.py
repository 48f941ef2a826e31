"""The contract every log adapter keeps, run against each one (see ``conftest.capture``)."""

from __future__ import annotations

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.redaction import REDACTED
from toolkit_batteries.log import DEBUG, ERROR, FATAL, INFO, WARN, Logger

from .conftest import Capture

ALL_LEVELS = (DEBUG, INFO, WARN, ERROR, FATAL)


def log_each_level(log: Logger) -> None:
    log.debug("d")
    log.info("i")
    log.warn("w")
    log.error("e")
    log.fatal("f")


class TestLoggerContract:
    @pytest.mark.parametrize("min_level", ALL_LEVELS)
    def test_min_level_drops_lower_levels(self, capture: Capture, min_level: int) -> None:
        log = capture.open(min_level)
        log_each_level(log)
        expected = [level for level in ALL_LEVELS if level >= min_level] if capture.writes else []
        assert [entry.level for entry in capture.entries()] == expected
        assert log.min_level == min_level

    @pytest.mark.parametrize("min_level", ALL_LEVELS)
    def test_enabled_agrees_with_min_level(self, capture: Capture, min_level: int) -> None:
        log = capture.open(min_level)
        assert [log.enabled(level) for level in ALL_LEVELS] == [
            capture.writes and level >= min_level for level in ALL_LEVELS
        ]

    def test_message_and_fields_are_rendered(self, capture: Capture) -> None:
        capture.open().info("user signed in", user_id=7, plan="pro")
        expected = (
            [] if not capture.writes else [("user signed in", {"user_id": "7", "plan": "pro"})]
        )
        assert [(e.message, e.fields) for e in capture.entries()] == expected

    def test_warning_and_warn_are_the_same_level(self, capture: Capture) -> None:
        log = capture.open()
        log.warning("a")
        log.warn("b")
        assert [e.level for e in capture.entries()] == ([WARN, WARN] if capture.writes else [])

    def test_bind_carries_fields_and_leaves_parent_alone(self, capture: Capture) -> None:
        parent = capture.open(INFO)
        child = parent.bind(request_id="r-1")
        grandchild = child.bind(user="ada", request_id="r-2")
        child.info("child", step=1)
        parent.info("parent")
        grandchild.info("grandchild")
        assert type(child) is type(parent) and child.min_level == INFO
        fields = [e.fields for e in capture.entries()]
        if capture.writes:
            assert fields == [
                {"request_id": "r-1", "step": "1"},
                {},
                {"request_id": "r-2", "user": "ada"},
            ]
        else:
            assert fields == []

    def test_secrets_never_reach_output(self, capture: Capture) -> None:
        log = capture.open().bind(api_key="bound-zebra")
        log.error(
            "login to postgres://app:msg-orchid@db/app failed with Bearer msg-walrus",
            password="hunter-lemur",
            authorization="Bearer bearer-otter",
            dsn="postgres://app:dsn-heron@db:5432/app",
            note="retrying postgres://app:note-quokka@db/app",
            error=ConnectionError("cannot reach postgres://app:exc-badger@db/app"),
            nested={"token": "nested-ibis", "ok": "visible"},
        )
        output = capture.output()
        for secret in (
            "zebra",
            "orchid",
            "walrus",
            "lemur",
            "otter",
            "heron",
            "quokka",
            "badger",
            "ibis",
        ):
            assert secret not in output
        if capture.writes:
            (entry,) = capture.entries()
            assert entry.fields["password"] == REDACTED
            assert entry.fields["dsn"] == REDACTED
            assert entry.fields["api_key"] == REDACTED
            # Only the password of a URL is masked; the rest stays useful.
            assert "postgres://app:[redacted]@db/app" in output
            assert "visible" in output
        else:
            assert output == ""

    def test_fatal_logs_and_returns(self, capture: Capture) -> None:
        log = capture.open()
        assert log.fatal("disk full") is None  # a SystemExit would have failed the test
        log.info("still running")
        expected = [FATAL, INFO] if capture.writes else []
        assert [e.level for e in capture.entries()] == expected

    @pytest.mark.parametrize("min_level", [-1, 5, 40])
    def test_min_level_out_of_range_is_rejected(self, capture: Capture, min_level: int) -> None:
        with pytest.raises(InvalidOptionsError) as caught:
            capture.open(min_level)
        assert caught.value.field == "min_level"
        assert 'log.default: option "min_level" must be between 0 and 4' in str(caught.value)
        assert str(min_level) not in str(caught.value)

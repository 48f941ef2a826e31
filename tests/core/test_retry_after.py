"""``Retry-After`` is read as RFC 9110 writes it (the policy's use: resilience tests)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from toolkit_batteries.core.outbound.retry_after import MAX_RETRY_AFTER, parse_retry_after

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("120", 60.0),  # capped
        ("7", 7.0),
        ("0.5", 0.5),
        (" 3 ", 3.0),
        (format_datetime(NOW + timedelta(seconds=30), usegmt=True), 30.0),
        (format_datetime(NOW - timedelta(seconds=30), usegmt=True), None),  # the past
        ("-1", None),
        ("soon", None),
        ("nan", None),
        ("", None),
        (None, None),
    ],
)
def test_parse(header, seconds):
    found = parse_retry_after(header, now=NOW.timestamp())
    assert found == (pytest.approx(seconds) if seconds is not None else None)
    assert found is None or found <= MAX_RETRY_AFTER

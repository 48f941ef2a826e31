"""The shared flag parsers: each accepts its range and refuses the rest with its rule."""

from __future__ import annotations

import argparse

import pytest

from toolkit_batteries.core.argtypes import (
    duration_seconds,
    port_number,
    positive_int,
    positive_seconds,
)


@pytest.mark.parametrize(
    ("parse", "good", "bad"),
    [
        (positive_int, [("1", 1), ("16", 16)], [("0", "at least 1"), ("x", "whole number")]),
        (
            port_number,
            [("1", 1), ("65535", 65535)],
            [("0", "between 1 and 65535"), ("65536", "between"), ("8o", "whole number")],
        ),
        (
            positive_seconds,
            [("0.5", 0.5), ("3", 3.0)],
            [("0", "must be positive"), ("-1", "positive"), ("soon", "number of seconds")],
        ),
        (
            duration_seconds,
            [("168h", 168 * 3600.0), ("30m", 1800.0), ("0", 0.0)],
            [("-5m", "must not be negative"), ("soon", 'such as "168h"')],
        ),
    ],
)
def test_parsers_accept_their_range_and_name_the_rule(parse, good, bad) -> None:
    for text, value in good:
        assert parse(text) == value
    for text, rule in bad:
        with pytest.raises(argparse.ArgumentTypeError, match=rule):
            parse(text)

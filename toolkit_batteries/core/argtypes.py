"""Value parsers for command-line flags, shared by the management commands and ``toolkit``.

Each is an argparse ``type=``: it returns the parsed value or raises
``argparse.ArgumentTypeError`` with a message that names the rule, never echoing a value
beyond what argparse itself prints. Their return annotations give the agent catalog the
flag's type (``toolkit --help --agent``).
"""

from __future__ import annotations

import argparse

__all__ = ["duration_seconds", "port_number", "positive_int", "positive_seconds"]


def _whole_number(text: str) -> int:
    """Parse an integer flag; every integer flag refuses other text with one message."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a whole number") from None


def positive_int(text: str) -> int:
    """Parse a count that must be at least 1 (``--workers``, ``--concurrency``)."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def port_number(text: str) -> int:
    """Parse a TCP port: 1 to 65535."""
    value = _whole_number(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be between 1 and 65535")
    return value


def positive_seconds(text: str) -> float:
    """Parse a positive number of seconds (``--tick``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def duration_seconds(text: str) -> float:
    """Parse an age such as ``168h``, ``30m`` or plain seconds (``--older-than``).

    Zero is allowed (everything is older than it); a negative age is refused.
    """
    from toolkit_batteries.core.options import parse_duration

    try:
        seconds = parse_duration(text).total_seconds()
    except ValueError:
        raise argparse.ArgumentTypeError('must be a duration such as "168h" or "30m"') from None
    if seconds < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return seconds

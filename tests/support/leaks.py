"""The one secret scanner: a credential appears in no log record, error, repr or output.

A redaction test drives a battery through its normal and failing paths with every logger
at DEBUG, collects everything a person could read (``error_texts``, ``log_texts``, CLI
output, reprs) and calls ``assert_never_shown``. The failure message points at where the
secret surfaced without printing the secret itself.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest


def error_texts(error: BaseException) -> list[str]:
    """Return what an error shows a reader: its message, repr and formatted traceback."""
    return [str(error), repr(error), "".join(traceback.format_exception(error))]


def log_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Every captured record as text: the formatted lines, each message, args and fields."""
    texts = [caplog.text]
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args), repr(record.__dict__)]
        if record.exc_info and record.exc_info[1] is not None:
            texts += error_texts(record.exc_info[1])
    return texts


def failing_texts(call: Callable[[], object]) -> list[str]:
    """Run ``call``, which must raise, and return what its error shows."""
    try:
        call()
    except Exception as exc:
        return error_texts(exc)
    raise AssertionError("expected an error")


def assert_never_shown(texts: Iterable[str], secrets: Iterable[str]) -> None:
    """Fail if any of ``secrets`` (each 16+ characters) occurs in any of ``texts``.

    The failure shows where the secret surfaced, with the secret itself masked.
    """
    needles = list(secrets)
    # A needle short enough to occur by chance would prove nothing either way.
    assert needles and all(len(n) >= 16 for n in needles), "scan for secrets of 16+ chars"
    joined = "\n".join(texts)
    for index, needle in enumerate(needles):
        at = joined.find(needle)
        if at >= 0:
            before = joined[max(0, at - 200) : at]
            after = joined[at + len(needle) : at + len(needle) + 200]
            raise AssertionError(
                f"secret #{index} ({needle[:3]}...) leaked: ...{before}<SECRET>{after}..."
            )


def config_show(service: str, env: dict[str, str], cwd: Path) -> tuple[Any, Any, dict[str, Any]]:
    """Run ``toolkit config show`` (text, then ``--json --service``) with ``env``.

    Returns both runs and the default instance's options from the JSON, for the tests
    that prove the command prints no secret; the text run must succeed.
    """
    from tests.cli.conftest import run_toolkit

    text = run_toolkit("config", "show", cwd=cwd, env=env)
    assert text.returncode == 0, text
    js = run_toolkit("config", "show", "--json", "--service", service, cwd=cwd, env=env)
    return text, js, js.json["data"][service]["default"]["options"]

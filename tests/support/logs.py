"""Make a battery's log records reach ``caplog`` whatever an earlier test did to logging.

Other tests may leave logging reconfigured (an in-process Celery worker sets the root
level to ERROR; a project's LOGGING may stop ``toolkit`` propagating), and tests that
read warnings through caplog would then see nothing.
"""

from __future__ import annotations

import logging

import pytest


def route_to_caplog(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Let records of the loggers ``names`` propagate at DEBUG for this test only."""
    for name in names:
        logger = logging.getLogger(name)
        monkeypatch.setattr(logger, "propagate", True)
        monkeypatch.setattr(logger, "disabled", False)
        monkeypatch.setattr(logger, "level", logging.DEBUG)

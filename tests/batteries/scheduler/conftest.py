"""Fixtures the scheduler's contract and embedded tests share."""

from __future__ import annotations

import pytest

from tests.batteries.scheduler.helpers import T0, Recorder
from tests.support.clock import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()

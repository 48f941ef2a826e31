"""Open the password battery the real way on every adapter, for the contract.

The cheapest parameters the spec allows keep the contract fast; the battery's own tests
cover the defaults.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

VARIANTS = ("argon2id",)
FAST = {"time": 1, "memory": 8192, "threads": 1}


def open_hasher(adapter: str, **options: Any) -> Any:
    settings = {"password": {"adapter": adapter, "options": {**FAST, **options}}}
    return Container(Config.load(settings, {})).password()


@pytest.fixture(params=VARIANTS)
def hasher(request: pytest.FixtureRequest) -> Any:
    return open_hasher(request.param)

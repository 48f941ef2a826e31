"""Shared fixtures: the real PostgreSQL and Redis servers, and a clean container.

Tests of ``sqlserver`` and ``kvserver`` adapters run against the real servers on this
machine and *fail* (never skip) when a server is unreachable: ``make test`` starts them
first, so an unreachable server is a real fault worth seeing.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from hypothesis import settings as hypothesis_settings

# The suite is a gate, so Hypothesis runs the same examples every time (as its CI profile
# does); set TOOLKIT_FUZZ_RANDOM=1 to explore new random inputs locally.
if not os.environ.get("TOOLKIT_FUZZ_RANDOM"):
    hypothesis_settings.register_profile("toolkit", derandomize=True, database=None)
    hypothesis_settings.load_profile("toolkit")


def _reachable(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection(
            (parts.hostname or "127.0.0.1", parts.port or default_port), 2
        ):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """Return the DSN of the real PostgreSQL server, failing the test if it is down."""
    dsn = settings.TEST_POSTGRES_DSN
    if not _reachable(dsn, 5432):
        pytest.fail("PostgreSQL is unreachable at 127.0.0.1:5432; run `make services`")
    return dsn


@pytest.fixture(scope="session")
def redis_url() -> str:
    """Return the URL of the real Redis server, failing the test if it is down."""
    url = settings.TEST_REDIS_URL
    if not _reachable(url, 6379):
        pytest.fail("Redis is unreachable at 127.0.0.1:6379; run `make services`")
    return url

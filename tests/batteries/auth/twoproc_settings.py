"""Settings of the child processes of the two-process revocation test.

The test suite's settings plus a ``kvserver`` cache instance (named by the test, so its
keys live under a namespace no other test uses) picked as the shared revocation store.
The secret arrives the production way: ``AUTH__DEFAULT__JWT_SECRET`` in the environment.
"""

from __future__ import annotations

import os

from tests.settings import *  # noqa: F403

_CACHE = os.environ["TEST_AUTH_CACHE_INSTANCE"]

TOOLKIT = {
    "cache": {
        _CACHE: {"adapter": "kvserver", "options": {"url": os.environ["TEST_AUTH_REDIS_URL"]}}
    },
}
TOOLKIT_AUTH_REVOCATION = f"cache:{_CACHE}"

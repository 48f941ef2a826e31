"""The spec's five-step key rotation, walked through with configuration changes.

1. add the new key to ``jwt.keys``; 2. switch ``jwt.active_kid``; 3. keep the retired key
listed until every token signed with it has expired; 4. then remove it. Removing it too
early makes still-valid tokens fail with ``InvalidTokenError`` ("after a key rotation,
all logins return 401 when the retired kid was removed before its tokens expired").

Each step is a new configuration (as a redeploy would load), and the clock is injected so
"until every token has expired" is a fact of the test, not a sleep.
"""

from __future__ import annotations

import time
from datetime import timedelta

import jwt
import pytest

from tests.support.clock import FakeClock
from toolkit_batteries.auth import InvalidTokenError, TokenExpiredError
from toolkit_batteries.auth.adapters.jwt import JWTAuthenticator
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError

from .conftest import NEW_SECRET, OLD_SECRET

OLD = {"kid": "2025-01", "secret": OLD_SECRET}
NEW = {"kid": "2025-07", "secret": NEW_SECRET}
TTL = timedelta(hours=1)


def deploy(
    clock: FakeClock, keys: list[dict], active_kid: str = "", environ=None
) -> JWTAuthenticator:
    """Load a configuration as a (re)deployed process would, and open the adapter."""
    settings = {"auth": {"options": {"jwt": {"keys": keys, "active_kid": active_kid}}}}
    options = Config.load(settings, environ or {}).service("auth").options.jwt
    return JWTAuthenticator(options, clock=clock)


def kid_of(token: str) -> str:
    return jwt.get_unverified_header(token)["kid"]


def test_the_five_step_rotation_procedure():
    clock = FakeClock(time.time())

    # Before: one key, tokens signed with it.
    before = deploy(clock, [OLD])
    old_token = before.issue("alice", ttl=TTL).token
    assert kid_of(old_token) == "2025-01"

    # Step 1: add the new key. active_kid is empty, so the first entry still signs.
    step1 = deploy(clock, [OLD, NEW])
    assert kid_of(step1.issue("bob", ttl=TTL).token) == "2025-01"
    assert step1.verify(old_token).subject == "alice"

    # Step 2: switch active_kid. New tokens carry the new kid; old tokens still verify.
    clock.now += 600
    step2 = deploy(clock, [OLD, NEW], active_kid="2025-07")
    new_token = step2.issue("carol", ttl=TTL).token
    assert kid_of(new_token) == "2025-07"
    jwt.decode(
        new_token,
        NEW_SECRET,
        algorithms=["HS256"],
        options={"verify_iat": False, "verify_exp": False},
    )
    assert step2.verify(old_token).subject == "alice"
    assert step2.verify(new_token).subject == "carol"

    # Step 3: keep the retired key listed until its last token has expired.
    clock.now += TTL.total_seconds() - 600 + 1
    with pytest.raises(TokenExpiredError):
        step2.verify(old_token)
    assert step2.verify(new_token).subject == "carol"

    # Step 4: remove it. New tokens keep working; old ones are now unknown, not expired.
    step4 = deploy(clock, [NEW])
    assert step4.verify(new_token).subject == "carol"
    assert kid_of(step4.issue("dave", ttl=TTL).token) == "2025-07"
    with pytest.raises(InvalidTokenError, match="unknown kid"):
        step4.verify(old_token)


def test_removing_the_retired_key_too_early_breaks_still_valid_tokens():
    clock = FakeClock(time.time())
    old_token = deploy(clock, [OLD]).issue("alice", ttl=TTL).token
    rotated = deploy(clock, [OLD, NEW], active_kid="2025-07")
    assert rotated.verify(old_token).subject == "alice"  # still valid for an hour
    too_early = deploy(clock, [NEW])
    with pytest.raises(InvalidTokenError, match="unknown kid") as caught:
        too_early.verify(old_token)
    assert not isinstance(caught.value, TokenExpiredError)


def test_active_kid_naming_no_listed_key_fails_at_open():
    clock = FakeClock(time.time())
    with pytest.raises(InvalidOptionsError, match=r'"jwt\.active_kid"'):
        deploy(clock, [NEW], active_kid="2025-01")


def test_active_kid_switch_through_the_environment():
    clock = FakeClock(time.time())
    switched = deploy(clock, [OLD, NEW], environ={"AUTH__DEFAULT__JWT_ACTIVE_KID": "2025-07"})
    assert kid_of(switched.issue("erin").token) == "2025-07"

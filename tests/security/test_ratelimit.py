"""Issue 12 defect 2: rate limits cannot be reset by churn nor used as a memory lever.

Each test fails on the landed code: the memory adapter forgave an exhausted bucket as soon
as enough junk keys pushed it out, keys were stored whole whatever their length, and no
key function could read a proxy's header safely.
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest
import redis

from toolkit_batteries.ratelimit.adapters.kvserver import KVServerRateLimiter
from toolkit_batteries.ratelimit.adapters.memory import MemoryRateLimiter
from toolkit_batteries.ratelimit.base import MAX_KEY_LENGTH, Limits
from toolkit_batteries.ratelimit.keys import forwarded_ip

#: The project template's login limiter: a burst of 5, then one attempt every 12 s.
LOGIN = {"rate": 1 / 12, "burst": 5, "max_entries": 1000}


def test_junk_keys_never_refill_an_exhausted_login_bucket() -> None:
    limiter = MemoryRateLimiter(Limits(**LOGIN))
    victim = "login:203.0.113.9:dana@example.com"
    assert all(limiter.allow(victim) for _ in range(5))
    assert not limiter.allow(victim)
    for n in range(1000):  # enough to push the exhausted bucket out of the table
        limiter.allow(f"login:203.0.113.9:junk{n}@example.com")
    assert limiter.evictions > 0 and len(limiter) <= LOGIN["max_entries"]
    refused = limiter.allow(victim)
    assert not refused
    assert refused.retry_after > 5  # still owes most of the 12 s, not a fresh bucket


def test_eviction_keeps_exactly_the_debt_it_would_have_had() -> None:
    now = [100.0]
    limiter = MemoryRateLimiter(Limits(rate=1, burst=4, max_entries=2), clock=lambda: now[0])
    assert limiter.allow("a", 4)
    limiter.allow("x")
    limiter.allow("y")  # evicts "a" (empty)
    now[0] += 2  # two tokens refilled, evicted or not
    assert limiter.allow("a", 2) and not limiter.allow("a")


def test_a_long_key_is_stored_bounded_in_memory() -> None:
    limiter = MemoryRateLimiter(Limits(rate=1, burst=2))
    huge = "login:198.51.100.7:" + "x" * (1 << 20)  # an email from a 1 MiB body
    assert limiter.allow(huge, 2)
    assert not limiter.allow(huge)  # still one bucket for the same key
    assert limiter.allow(huge[:-1] + "y")  # a different long key has its own bucket
    assert max(len(key) for key in limiter._buckets) <= MAX_KEY_LENGTH


@pytest.mark.redis
def test_a_long_key_is_stored_bounded_on_the_server(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    prefix = f"t-{uuid.uuid4().hex}:"
    try:
        limiter = KVServerRateLimiter(client, Limits(rate=1, burst=2), prefix=prefix)
        huge = "login:198.51.100.7:" + "x" * (1 << 20)
        assert limiter.allow(huge, 2)
        assert not limiter.allow(huge)
        keys = list(client.scan_iter(match=f"{prefix}*"))
        assert len(keys) == 1 and len(keys[0]) <= len(prefix) + len("ratelimit:") + 200
    finally:
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
        client.close()


def request(remote: str, forwarded: str | None = None) -> SimpleNamespace:
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return SimpleNamespace(META=meta)


def test_forwarded_for_is_believed_only_from_a_trusted_proxy() -> None:
    key = forwarded_ip(["10.0.0.0/8", "2001:db8::/32"])
    # A client talking to us directly cannot pick its own bucket.
    assert key(request("198.51.100.7", "1.2.3.4")) == "198.51.100.7"
    # Through our proxy: the address the proxy saw, not what the client wrote before it.
    assert key(request("10.0.0.2", "1.2.3.4, 203.0.113.5")) == "203.0.113.5"
    # Two trusted hops are skipped.
    assert key(request("10.0.0.2", "203.0.113.5, 10.1.1.1")) == "203.0.113.5"
    # Garbage stops at the proxy that forwarded it: no fresh bucket per junk value.
    assert key(request("10.0.0.2", "not-an-ip")) == "10.0.0.2"
    assert key(request("10.0.0.2")) == "10.0.0.2"
    assert key(request("2001:db8::1", "2001:db8::9, 2001:4860::8888")) == "2001:4860::8888"
    with pytest.raises(ValueError):
        forwarded_ip([])


def test_the_default_ip_key_never_reads_forwarded_for() -> None:
    from toolkit_batteries.ratelimit.keys import client_ip, user_or_ip

    spoofed = SimpleNamespace(
        META={"REMOTE_ADDR": "198.51.100.7", "HTTP_X_FORWARDED_FOR": "1.2.3.4"}, user=None
    )
    assert client_ip(spoofed) == "198.51.100.7"
    assert user_or_ip(spoofed) == "ip:198.51.100.7"


# ------------------------------------------------------------------ the template's login


@pytest.fixture(scope="module")
def login_results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Render the project template and run the login scenarios inside it."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from tests.reference_app.driver import RESULTS_MARKER
    from tests.test_reference_app import CHEAP_ARGON2, JWT_SECRET
    from tests.test_template import NAME, _clean_env, render

    project = render(tmp_path_factory.mktemp("login") / "proj")
    env = _clean_env() | CHEAP_ARGON2
    env |= {
        "DJANGO_SETTINGS_MODULE": f"{NAME}.settings",
        "DB__DEFAULT__PATH": str(tmp_path_factory.mktemp("logindb") / "db.sqlite3"),
        "AUTH__DEFAULT__JWT_SECRET": JWT_SECRET,
        "DJANGO_ALLOWED_HOSTS": "testserver",
    }
    for key in ("DJANGO_DEBUG", "TOOLKIT_ENV"):
        env.pop(key, None)
    driver = Path(__file__).with_name("login_driver.py")
    done = subprocess.run(
        [sys.executable, str(driver), str(project), "churn", "junk_email", "address_budget"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith(RESULTS_MARKER))
    return json.loads(line.removeprefix(RESULTS_MARKER))


def test_login_stays_limited_after_1000_junk_keys(login_results: dict) -> None:
    churn = login_results["churn"]
    assert churn["guesses"] == [401] * 5 and churn["before"] == 429
    assert churn["evictions"] > 0  # the junk really pushed buckets out
    assert churn["after"] == 429


def test_login_validates_the_email_before_limiting(login_results: dict) -> None:
    junk = login_results["junk_email"]
    assert junk["status"] == 400 and "email" in junk["fields"]
    assert junk["new_buckets"] == [0, 0]  # refused before any limiter saw it


def test_login_has_a_per_address_budget_independent_of_the_email(login_results: dict) -> None:
    statuses = login_results["address_budget"]["statuses"]
    assert statuses[:30] == [401] * 30  # each email is new to the per-email limit...
    assert statuses[30:] == [429, 429]  # ...but the address ran out of attempts

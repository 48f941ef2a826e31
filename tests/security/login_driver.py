"""Scenarios for the template's login limits, run inside a rendered project.

``tests/security/test_ratelimit.py`` runs this file like ``tests/reference_app/driver.py``
(whose set-up and output format it reuses): ``python login_driver.py <project> <names>``.
Nothing here asserts; each scenario records what the application answered.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.reference_app import driver


def login(email: str, address: str) -> int:
    return driver.post("/api/login", {"email": email, "password": "guess"}, address=address)[
        "status"
    ]


def scenario_churn() -> dict[str, Any]:
    """Exhaust five guesses, push 1000 junk keys through the login limiter, guess again."""
    from toolkit_batteries import services

    guesses = [login("dana@example.com", "10.8.8.8") for _ in range(5)]
    before = login("dana@example.com", "10.8.8.8")
    limiter = services.ratelimit("login")
    for n in range(1000):
        limiter.allow(f"login:192.0.2.{n % 250}:junk{n}@example.com")
    return {
        "guesses": guesses,
        "before": before,
        "after": login("dana@example.com", "10.8.8.8"),
        "evictions": getattr(limiter, "evictions", None),
    }


def scenario_junk_email() -> dict[str, Any]:
    """Send a megabyte-sized 'email': it must be refused before any limiter sees it."""
    from toolkit_batteries import services

    limiters = [services.ratelimit("login"), services.ratelimit("login_address")]
    before = [len(limiter) for limiter in limiters]
    huge = "x" * (1 << 19) + "@example.com"
    answer = driver.post("/api/login", {"email": huge, "password": "guess"}, address="10.6.6.6")
    return {
        "status": answer["status"],
        "fields": answer["body"]["error"].get("fields", {}),
        "new_buckets": [len(limiter) - n for limiter, n in zip(limiters, before, strict=True)],
    }


def scenario_address_budget() -> dict[str, Any]:
    """One address cycling emails: each is new to the per-email limit, not to the address."""
    return {"statuses": [login(f"user{n}@example.com", "10.7.7.7") for n in range(32)]}


driver.SCENARIOS.update(
    churn=scenario_churn, junk_email=scenario_junk_email, address_budget=scenario_address_budget
)

if __name__ == "__main__":
    sys.exit(driver.main(sys.argv[1:]))

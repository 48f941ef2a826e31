"""A job resolved by dotted name: importing this module registers it."""

from __future__ import annotations

from toolkit_batteries.queue.jobs import job


@job(name="tests.batteries.scheduler.jobs_fixture.ping")
def ping(*args: object) -> str:
    """Return "pong" (the tests only dispatch it)."""
    return "pong"

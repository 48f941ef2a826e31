"""The ``memory`` adapter: breaker state in this process (the default).

Each process has its own breakers: behind N workers, a failing dependency has to trip N
breakers. Use ``kvserver`` to trip them all at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.resilience.backoff import Random
from toolkit_batteries.resilience.base import Policy, PolicySettings, settings_from_options
from toolkit_batteries.resilience.breaker import MemoryBreakerStore

__all__ = ["MemoryPolicy"]


class MemoryPolicy(Policy):
    """A policy whose breaker lives in this process."""

    adapter_name = "memory"

    def __init__(
        self,
        settings: PolicySettings,
        *,
        instance: str = "default",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        rng: Random | None = None,
    ) -> None:
        """Build the policy; ``clock``, ``sleep`` and ``rng`` are for tests."""
        store = None
        if settings.breaker is not None:
            store = MemoryBreakerStore(settings.breaker, lambda: clock() * 1000)
        super().__init__(settings, store, instance=instance, clock=clock, sleep=sleep, rng=rng)

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Open the policy from the service's options."""
        return cls(settings_from_options(ctx.options, instance=ctx.instance), instance=ctx.instance)

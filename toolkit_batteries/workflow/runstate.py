"""What the step runner and the compensation share: the lease signal and run-row helpers.

:mod:`.base` runs steps forward and :mod:`.compensation` undoes them; both release a
run's lease with the same row changes, cut an error to the same length (redacted), count
a retry policy's attempts the same way and stop when another worker took the run. These
live here, below both, so neither imports the other's module for them.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.redaction import redact_string

__all__ = ["MAX_ERROR", "max_attempts"]

#: Longest error text kept on a run or step.
MAX_ERROR = 2000
#: A run's fields by name: changes to make, or values to match (a tuple: any of them).
Fields = dict[str, Any]
#: Values a conditional write matches, if any.
Expect = Fields | None
#: A step job ready to push: (topic, body).
Job = tuple[str, bytes]


class _LeaseLost(Exception):
    """Another worker owns the run now; roll this step back."""


def _reason(exc: BaseException) -> str:
    return redact_string(f"{type(exc).__name__}: {exc}")[:MAX_ERROR]


def max_attempts(policy: Any) -> int:
    """Return the attempts a retry policy allows, the first included (<= 0 means 1)."""
    attempts = int(policy.max_attempts)
    return attempts if attempts > 0 else 1


def _released(now: float, **changes: Any) -> dict[str, Any]:
    return {"lease_owner": "", "lease_until": 0.0, "updated_at": now, **changes}

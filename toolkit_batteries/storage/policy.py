"""The typed access policy: who may read, write, update or delete in a bucket.

``policy`` maps bucket names to a :class:`~.options.BucketPolicy`; the key ``Default`` is
the fallback for buckets not listed. Each operation (``read`` downloads, ``write`` new
objects, ``update`` overwrites, ``delete``) has ``public``, ``allow`` and ``deny``:

1. a subject matched by ``deny`` is refused, whatever else says (deny wins, also over
   ``public``);
2. ``public: true`` lets anyone in, including unauthenticated callers;
3. a subject matched by ``allow`` is let in;
4. anyone else is refused.

Matching: an entry equals the subject's id; ``*`` matches any authenticated subject;
``anonymous`` matches an unauthenticated caller (``None``). A bucket that is neither
listed nor covered by ``Default`` refuses everyone.

An empty ``policy`` is the legacy private mode: nothing is public (every link is
presigned), every call made on behalf of a subject is refused, and only the server's own
(trusted) calls and presigned URLs reach objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolkit_batteries.core.errors import InvalidOptionsError

from .errors import AccessDeniedError

__all__ = [
    "ANONYMOUS",
    "DEFAULT_BUCKET_KEY",
    "OPERATIONS",
    "AccessDeniedError",
    "AccessPolicy",
    "subject_of",
]

#: The operations a policy governs.
OPERATIONS = ("read", "write", "update", "delete")
#: The policy key of the fallback bucket policy.
DEFAULT_BUCKET_KEY = "Default"
#: The policy word for an unauthenticated caller.
ANONYMOUS = "anonymous"
#: Policy schema versions this release reads (the same rules).
VERSIONS = frozenset({"0", "1"})


def subject_of(who: Any) -> str | None:
    """Return the policy subject of ``who``: a user, a request, a string id or ``None``.

    A Django user (or a request's ``user``) that is authenticated is its primary key as a
    string; an anonymous user, a request without one and ``None`` are unauthenticated.
    """
    if who is None:
        return None
    if isinstance(who, str):
        return who or None
    user = getattr(who, "user", who) if not hasattr(who, "is_authenticated") else who
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return str(user.pk)


@dataclass(frozen=True, slots=True)
class _Rule:
    public: bool
    allow: frozenset[str]
    deny: frozenset[str]

    def allows(self, subject: str | None) -> bool:
        if self._matches(self.deny, subject):
            return False
        return self.public or self._matches(self.allow, subject)

    @staticmethod
    def _matches(entries: frozenset[str], subject: str | None) -> bool:
        if subject is None:
            return ANONYMOUS in entries
        return subject in entries or "*" in entries


class AccessPolicy:
    """A decoded ``policy`` option, answering :meth:`allows` in a dictionary lookup."""

    __slots__ = ("_buckets", "_default", "legacy")

    def __init__(self, policy: Mapping[str, Any] | None, *, instance: str = "default") -> None:
        self._buckets: dict[str, dict[str, _Rule]] = {}
        self._default: dict[str, _Rule] | None = None
        #: ``True`` when no policy is configured (the legacy private mode).
        self.legacy = not policy
        for bucket, spec in (policy or {}).items():
            version = str(getattr(spec, "version", "0") or "0")
            if version not in VERSIONS:
                raise InvalidOptionsError(
                    "storage",
                    f"policy.{bucket}.version",
                    f"is not a policy schema version this release reads "
                    f"({', '.join(sorted(VERSIONS))})",
                    instance=instance,
                )
            rules = {}
            for operation in OPERATIONS:
                op = getattr(spec, operation)
                rules[operation] = _Rule(
                    bool(op.public), frozenset(map(str, op.allow)), frozenset(map(str, op.deny))
                )
            if bucket == DEFAULT_BUCKET_KEY:
                self._default = rules
            else:
                self._buckets[bucket] = rules

    def rules_of(self, bucket: str) -> dict[str, _Rule] | None:
        """Return the rules that govern ``bucket`` (its own, else ``Default``, else none)."""
        return self._buckets.get(bucket, self._default)

    def allows(self, bucket: str, operation: str, subject: str | None) -> bool:
        """Tell whether ``subject`` (``None``: unauthenticated) may do ``operation``."""
        if operation not in OPERATIONS:
            raise ValueError(f"storage: unknown operation {operation!r}")
        rules = self.rules_of(bucket)
        return rules is not None and rules[operation].allows(subject)

    def is_public(self, bucket: str, operation: str = "read") -> bool:
        """Tell whether ``operation`` in ``bucket`` is open to anyone (and denies nobody)."""
        rules = self.rules_of(bucket)
        if rules is None:
            return False
        rule = rules[operation]
        return rule.public and not rule.deny

    def buckets(self) -> list[str]:
        """Return the bucket names the policy lists (``Default`` excluded)."""
        return sorted(self._buckets)

    def check(self, bucket: str, operation: str, subject: str | None) -> None:
        """Raise :class:`AccessDeniedError` unless :meth:`allows`."""
        if not self.allows(bucket, operation, subject):
            raise AccessDeniedError(bucket, operation)

"""The flag service: is a feature on for this subject and tenant, and with which value?

::

    flag = services.flag()
    flag.enabled("new_checkout", subject=user.pk, tenant="acme")      # True / False
    flag.value("theme", subject=user.pk, default="light")             # the flag's value

A flag is *missing* (unknown name, or a remote parameter that defers to the in-app
default), *off* (disabled, or the subject falls outside its rollout), or *served* with a
value. :meth:`Flag.enabled` answers ``default`` for a missing flag, ``False`` for an off
one and the truthiness of the served value otherwise; :meth:`Flag.value` answers
``default`` for a missing or off flag and the value otherwise.

Percentage rollouts put a subject in a bucket with :func:`bucket`: SHA-256 of
``"<seed>.<subject>"`` modulo 100,000,000 (millionths of a percent), the same hash the
remote configuration service's server-side percent conditions use. The answer for one
subject is the same in every process and on both adapters, and raising a rollout from
10 % to 20 % keeps the first 10 % in. Without a subject, a partial rollout is off.

Adapters implement one primitive, :meth:`Flag._resolve`; ``static`` also overrides
:meth:`Flag.enabled` with an inlined fast path.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar, Final

from toolkit_batteries.core.adapter import Service

__all__ = ["MICRO_PERCENT", "MISSING", "OFF", "TRUTHY", "Flag", "bucket", "truthy"]

#: Buckets of a rollout: 100 % in millionths of a percent.
MICRO_PERCENT: Final = 100_000_000
#: Strings that count as "on" (case-insensitive), as the remote service defines them.
TRUTHY: Final = frozenset({"1", "true", "t", "yes", "y", "on"})


class _Marker:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: :meth:`Flag._resolve` for an unknown flag (the caller's default applies).
MISSING: Final[Any] = _Marker("MISSING")
#: :meth:`Flag._resolve` for a flag that is off for this subject and tenant.
OFF: Final[Any] = _Marker("OFF")

_sha256 = hashlib.sha256
_from_bytes = int.from_bytes


def bucket(seed: str, subject: str) -> int:
    """Return ``subject``'s bucket in ``[0, 100_000_000)`` for a rollout seeded ``seed``.

    Stable across processes and machines (SHA-256, never Python's salted ``hash``).
    """
    text = f"{seed}.{subject}" if seed else subject
    return _from_bytes(_sha256(text.encode()).digest(), "big") % MICRO_PERCENT


def truthy(value: Any) -> bool:
    """Tell whether a served value means "on" (``True``, non-zero, ``"true"``, ``"on"``...)."""
    if value is True or value is False:
        return value
    if isinstance(value, str):
        return value.strip().lower() in TRUTHY
    if isinstance(value, (int, float)):
        return value != 0
    return bool(value)


def subject_key(subject: Any) -> str | None:
    """Return the text a subject is hashed as (``None`` and ``""`` mean no subject)."""
    if subject is None:
        return None
    text = subject if isinstance(subject, str) else str(subject)
    return text or None


class Flag(Service):
    """Feature flags: :meth:`enabled`, :meth:`value`, :meth:`names`."""

    service_name: ClassVar[str] = "flag"

    def __init__(self, *, instance: str = "default") -> None:
        self.instance = instance

    # ------------------------------------------------------------------ the operations

    def enabled(
        self, name: str, *, subject: Any = None, tenant: str | None = None, default: bool = False
    ) -> bool:
        """Tell whether flag ``name`` is on for ``subject`` within ``tenant``.

        An unknown flag answers ``default``; an off flag (disabled, or the subject outside
        the rollout) answers ``False``.
        """
        found = self._resolve(name, subject_key(subject), tenant or None)
        if found is MISSING:
            return default
        if found is OFF:
            return False
        return truthy(found)

    def value(
        self, name: str, *, subject: Any = None, tenant: str | None = None, default: Any = None
    ) -> Any:
        """Return flag ``name``'s value for ``subject`` within ``tenant``, else ``default``."""
        found = self._resolve(name, subject_key(subject), tenant or None)
        if found is MISSING or found is OFF:
            return default
        return found

    def names(self) -> list[str]:
        """Return the names of the flags the adapter knows, sorted."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the primitive

    def _resolve(self, name: str, subject: str | None, tenant: str | None) -> Any:
        """Return the served value, :data:`OFF` or :data:`MISSING`."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} flag.{self.instance}>"

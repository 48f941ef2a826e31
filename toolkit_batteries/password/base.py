"""The password service: hash, verify and re-hash passwords with argon2id.

Every adapter subclasses :class:`PasswordHasher`. The base class adds what must not
differ between adapters: :meth:`PasswordHasher.verify_dummy`, which spends the time of a
real verification on a throw-away hash, so a login for an unknown account takes as long
as a login with a wrong password and response times do not reveal which emails exist::

    hasher = services.password()
    encoded = hasher.hash("correct horse battery staple")
    hasher.verify("correct horse battery staple", encoded)    # True
    hasher.needs_rehash(encoded)                              # False until parameters change

The parameters are range-checked twice: when the configuration loads (the options
declare the spec's bounds) and again when an adapter opens, so options built in code
cannot slip past the bounds either.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.options import field_specs

__all__ = ["PARAMETER_RANGES", "Argon2Parameters", "PasswordHasher"]


def _ranges() -> dict[str, tuple[int, int]]:
    from .options import PasswordOptions

    out: dict[str, tuple[int, int]] = {}
    for name, spec in field_specs(PasswordOptions).items():
        if spec.min is not None and spec.max is not None:
            out[name] = (int(spec.min), int(spec.max))
    return out


#: Inclusive bounds of each parameter (spec, "Limits"), read from the declared options so
#: the two places cannot disagree: time 1-10, memory 8192-1048576 KiB, threads 1-16,
#: salt_length 8-64 bytes, key_length 16-128 bytes.
PARAMETER_RANGES: dict[str, tuple[int, int]] = _ranges()


@dataclass(frozen=True, slots=True)
class Argon2Parameters:
    """The five argon2id parameters, already range-checked."""

    #: Iterations (argon2 ``time_cost``).
    time: int = 3
    #: Memory in KiB (argon2 ``memory_cost``).
    memory: int = 65536
    #: Lanes (argon2 ``parallelism``).
    threads: int = 4
    #: Salt length in bytes.
    salt_length: int = 16
    #: Derived key (hash) length in bytes.
    key_length: int = 32

    @classmethod
    def from_options(
        cls, options: Any, *, service: str = "password", instance: str = "default"
    ) -> Argon2Parameters:
        """Return the parameters of ``options``; raise if one is missing or out of range.

        Raises :class:`InvalidOptionsError`, which names the service and the field and
        states the allowed range, never the value given.
        """
        values: dict[str, int] = {}
        for name, (low, high) in PARAMETER_RANGES.items():
            value = getattr(options, name, None)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidOptionsError(service, name, "must be an integer", instance=instance)
            if not low <= value <= high:
                raise InvalidOptionsError(
                    service, name, f"must be between {low} and {high}", instance=instance
                )
            values[name] = value
        return cls(**values)


class PasswordHasher(Service):
    """Interface of the password service; adapters implement the three operations."""

    service_name: ClassVar[str] = "password"

    def __init__(self, parameters: Argon2Parameters, *, instance: str = "default") -> None:
        self.parameters = parameters
        self.instance = instance
        self._dummy: str | None = None
        self._dummy_lock = threading.Lock()

    def hash(self, password: str) -> str:
        """Return the encoded hash of ``password`` (a fresh random salt every call)."""
        raise NotImplementedError

    def verify(self, password: str, encoded: str) -> bool:
        """Tell whether ``password`` matches ``encoded``; a malformed hash is a mismatch."""
        raise NotImplementedError

    def needs_rehash(self, encoded: str) -> bool:
        """Tell whether ``encoded`` was made with other parameters than the current ones.

        Call it after a successful :meth:`verify` and store ``hash(password)`` when it
        answers True: that is how a parameter change reaches existing accounts.
        """
        raise NotImplementedError

    def verify_dummy(self, password: str) -> bool:
        """Spend the time of a real :meth:`verify`, against a throw-away hash; return False.

        Call it when the account does not exist, so that "no such user" and "wrong
        password" take the same time. The throw-away hash is made once per hasher, with
        the current parameters, from a random secret nobody knows.
        """
        encoded = self._dummy
        if encoded is None:
            with self._dummy_lock:
                if self._dummy is None:
                    self._dummy = self.hash(secrets.token_urlsafe(32))
                encoded = self._dummy
        self.verify(password, encoded)
        return False

    def __repr__(self) -> str:
        p = self.parameters
        return (
            f"<{type(self).__name__} {self.service_name}.{self.instance} "
            f"t={p.time} m={p.memory} p={p.threads} salt={p.salt_length} key={p.key_length}>"
        )

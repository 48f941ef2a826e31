"""The ``argon2id`` adapter: argon2-cffi with the configured parameters.

Hashes are PHC strings (``$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>``), the format
argon2-cffi, libsodium and most other argon2 libraries read, so stored hashes stay
portable. Verification refuses hashes whose parameters fall outside the spec's ranges:
a tampered row cannot make the server allocate gigabytes or spin for seconds.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError
from toolkit_batteries.password.base import PARAMETER_RANGES, Argon2Parameters, PasswordHasher

with MissingExtraError.guard("password", "argon2id", "auth", "argon2-cffi"):
    import argon2
    from argon2.exceptions import InvalidHashError, VerificationError

__all__ = ["Argon2idHasher"]

_ARGON2ID = "$argon2id$"


class Argon2idHasher(PasswordHasher):
    """argon2id through ``argon2.PasswordHasher``."""

    adapter_name = "argon2id"

    def __init__(self, parameters: Argon2Parameters, *, instance: str = "default") -> None:
        super().__init__(parameters, instance=instance)
        self._hasher = argon2.PasswordHasher(
            time_cost=parameters.time,
            memory_cost=parameters.memory,
            parallelism=parameters.threads,
            hash_len=parameters.key_length,
            salt_len=parameters.salt_length,
            type=argon2.Type.ID,
        )

    @classmethod
    def open(cls, ctx: OpenContext) -> Argon2idHasher:
        """Check the five parameters against their ranges and build the hasher."""
        parameters = Argon2Parameters.from_options(
            ctx.options, service=ctx.service, instance=ctx.instance
        )
        return cls(parameters, instance=ctx.instance)

    def hash(self, password: str) -> str:
        """Return the PHC-encoded argon2id hash of ``password``."""
        return self._hasher.hash(_text(password))

    def verify(self, password: str, encoded: str) -> bool:
        """Tell whether ``password`` matches ``encoded``; anything malformed is False."""
        password = _text(password)
        if not isinstance(encoded, str) or not encoded.startswith(_ARGON2ID):
            return False
        if not _parameters_in_range(encoded):
            return False
        try:
            return self._hasher.verify(encoded, password)
        except (VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, encoded: str) -> bool:
        """Tell whether ``encoded`` differs from the current parameters (or is not argon2id)."""
        if not isinstance(encoded, str) or not encoded.startswith(_ARGON2ID):
            return True
        try:
            return self._hasher.check_needs_rehash(encoded)
        except (InvalidHashError, ValueError):
            return True

    @staticmethod
    def phc_parameters(encoded: str) -> Any:
        """Return argon2-cffi's ``Parameters`` of ``encoded`` (raises on a malformed hash)."""
        return argon2.extract_parameters(encoded)


def _text(password: Any) -> str:
    if not isinstance(password, str):
        raise TypeError("password must be a str")
    return password


def _parameters_in_range(encoded: str) -> bool:
    try:
        found = argon2.extract_parameters(encoded)
    except (InvalidHashError, ValueError):
        return False
    values = {
        "time": found.time_cost,
        "memory": found.memory_cost,
        "threads": found.parallelism,
        "salt_length": found.salt_len,
        "key_length": found.hash_len,
    }
    return all(low <= values[name] <= high for name, (low, high) in PARAMETER_RANGES.items())

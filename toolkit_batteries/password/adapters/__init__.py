"""The password adapters (the spec lists one: ``argon2id``); argon2-cffi is not imported
by a project that never hashes a password.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(__name__, "argon2id.Argon2idHasher")

#: ``argon2`` is what Django and argon2-cffi call the same algorithm family.
ALIASES: dict[str, str] = {"argon2": "argon2id"}

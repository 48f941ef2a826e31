"""The password adapters, by canonical name (the spec lists one: ``argon2id``).

Values are dotted paths, imported only when the adapter opens, so argon2-cffi is not
imported by a project that never hashes a password.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "argon2id": "toolkit_batteries.password.adapters.argon2id.Argon2idHasher",
}

#: ``argon2`` is what Django and argon2-cffi call the same algorithm family.
ALIASES: dict[str, str] = {"argon2": "argon2id"}

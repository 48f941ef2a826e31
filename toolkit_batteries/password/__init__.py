"""The ``password`` battery: hash and verify passwords with argon2id.

Get the configured hasher from the registry (``services.password()``) or a container
(``container.password()``)::

    encoded = services.password().hash(password)
    services.password().verify(password, encoded)     # True / False
    services.password().needs_rehash(encoded)         # parameters changed since?

:class:`toolkit_batteries.password.hashers.ToolkitArgon2PasswordHasher` plugs the same
parameters into Django's ``PASSWORD_HASHERS``. argon2-cffi is imported only by the adapter.
"""

from __future__ import annotations

from .base import PARAMETER_RANGES, Argon2Parameters, PasswordHasher

__all__ = ["PARAMETER_RANGES", "Argon2Parameters", "PasswordHasher"]

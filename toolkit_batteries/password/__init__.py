"""The ``password`` battery: hash and verify passwords with argon2id.

Get the configured hasher from the registry (``services.password()``) or a container
(``container.password()``)::

    encoded = services.password().hash(password)
    services.password().verify(password, encoded)     # True / False
    services.password().needs_rehash(encoded)         # parameters changed since?

:class:`toolkit_batteries.password.hashers.ToolkitArgon2PasswordHasher` plugs the same
parameters into Django's ``PASSWORD_HASHERS``. argon2-cffi is imported only by the adapter.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Argon2Parameters PARAMETER_RANGES PasswordHasher",
)

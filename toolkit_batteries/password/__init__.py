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

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import PARAMETER_RANGES, Argon2Parameters, PasswordHasher

__all__ = ["PARAMETER_RANGES", "Argon2Parameters", "PasswordHasher"]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Argon2Parameters": "base",
    "PARAMETER_RANGES": "base",
    "PasswordHasher": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

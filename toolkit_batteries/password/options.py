"""Options of the ``password`` service (password hashing)."""

from __future__ import annotations

from toolkit_batteries.core.options import option, options_class

__all__ = ["PasswordOptions"]


@options_class
class PasswordOptions:
    """Options of ``password``; the only adapter is ``argon2id``. Every key is range-checked."""

    time: int = option(3, min=1, max=10, doc="iterations, 1-10")
    memory: int = option(65536, min=8192, max=1048576, doc="memory in KiB, 8192-1048576")
    threads: int = option(4, min=1, max=16, doc="parallelism, 1-16")
    salt_length: int = option(16, min=8, max=64, doc="salt length in bytes, 8-64")
    key_length: int = option(32, min=16, max=128, doc="hash length in bytes, 16-128")

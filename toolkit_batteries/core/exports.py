"""One way for a battery package to export its public names: written once, imported on use.

A battery's ``__init__.py`` is imported by ``django.setup()`` (it is the Django app), so it
must not import the battery's code: that would make every project pay, at start-up, for
every battery it lists. Each package therefore says, once, which submodule defines which
public name::

    __all__, __getattr__, __dir__ = lazy_exports(
        __name__, base="Payment PaymentError", states="PaymentState"
    )

and the first ``toolkit_batteries.payment.Payment`` imports ``.base`` (PEP 562); the value
is then cached in the package's namespace, so later reads are plain attribute reads.
``from toolkit_batteries.payment import *`` and ``dir()`` see exactly ``__all__``.

This module imports only the standard library: every battery package imports it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import import_module
from typing import Any

__all__ = ["EXPORTS", "lazy_exports"]

#: Package -> public name -> the submodule defining it, for every package that called
#: :func:`lazy_exports` (read by :mod:`.stubs`, which writes each package's ``__init__.pyi``
#: from it so that a type checker sees the real classes behind the lazy names).
EXPORTS: dict[str, dict[str, str]] = {}


def lazy_exports(
    package: str, /, **table: str
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__all__, __getattr__, __dir__)`` for ``package``.

    Each keyword names a submodule (relative to ``package``) and its value lists, separated
    by whitespace, the public names that submodule defines. A name listed twice is a mistake that
    would silently export the wrong object, so it raises here, at the package's import.
    """
    where: dict[str, str] = {}
    for module, names in table.items():
        for name in names.split():
            if name in where:
                raise ValueError(f"{package}: {name!r} is exported by .{where[name]} and .{module}")
            where[name] = module
    public = sorted(where)
    EXPORTS[package] = where
    # A name that is also its submodule's name (``resilience.backoff``) is bound eagerly:
    # the first import of that submodule from anywhere would otherwise set the package
    # attribute to the module, and ``from package import name`` would return the module.
    namespace = vars(sys.modules[package])
    for name, module in where.items():
        if name == module:
            namespace[name] = getattr(import_module(f".{module}", package), name)

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{module}", package), name)
        # Cached where the next read finds it first, so only the first read pays.
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(public))

    return public, __getattr__, __dir__

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
from types import ModuleType
from typing import Any

__all__ = ["EXPORTS", "lazy_exports"]

#: Package -> public name -> the submodule defining it, for every package that called
#: :func:`lazy_exports` (read by :mod:`.stubs`, which writes each package's ``__init__.pyi``
#: from it so that a type checker sees the real classes behind the lazy names).
EXPORTS: dict[str, dict[str, str]] = {}
#: Package -> its public names that are also its submodules' names (see lazy_exports).
_SAME_NAME: dict[str, frozenset[str]] = {}


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
    # A name that is also its submodule's name (``resilience.backoff``) stays lazy too: the
    # import system binds a loaded submodule on its package with ``setattr``, which
    # :class:`_SameNamePackage` turns into the submodule's export, so ``from package import
    # name`` never returns the module (binding it eagerly cost every ``django.setup()``).
    same = frozenset(name for name, module in where.items() if name == module)
    if same:
        _SAME_NAME[package] = same
        sys.modules[package].__class__ = _SameNamePackage

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


class _SameNamePackage(ModuleType):
    """A package exporting a name that is also its submodule's name (``backoff.backoff``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        """Bind the submodule's export, not the submodule, when the import system binds it."""
        if (
            isinstance(value, ModuleType)
            and name in _SAME_NAME.get(self.__name__, ())
            and value.__name__ == f"{self.__name__}.{name}"
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)

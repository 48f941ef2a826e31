"""The ``flag`` battery: feature flags from a file or a remote configuration service.

Get the configured service from the registry (``services.flag()``) or a container;
pick ``static`` (the default: a JSON or TOML file, reloaded when it changes) or
``remotecfg`` (the remote service's server templates, cached and served stale on an
outage). In templates, ``{% load toolkit_flags %}{% flag "new_checkout" as on %}``; in
DRF views, :func:`~toolkit_batteries.flag.drf.flag_enabled` and
:func:`~toolkit_batteries.flag.drf.require_flag`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import MICRO_PERCENT, Flag, bucket, truthy
    from .request import flag_enabled, flag_value, subject_of, tenant_of

__all__ = [
    "MICRO_PERCENT",
    "Flag",
    "bucket",
    "flag_enabled",
    "flag_value",
    "subject_of",
    "tenant_of",
    "truthy",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Flag": "base",
    "MICRO_PERCENT": "base",
    "bucket": "base",
    "flag_enabled": "request",
    "flag_value": "request",
    "subject_of": "request",
    "tenant_of": "request",
    "truthy": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

"""The ``flag`` battery: feature flags from a file or a remote configuration service.

Get the configured service from the registry (``services.flag()``) or a container;
pick ``static`` (the default: a JSON or TOML file, reloaded when it changes) or
``remotecfg`` (the remote service's server templates, cached and served stale on an
outage). In templates, ``{% load toolkit_flags %}{% flag "new_checkout" as on %}``; in
DRF views, :func:`~toolkit_batteries.flag.drf.flag_enabled` and
:func:`~toolkit_batteries.flag.drf.require_flag`.
"""

from __future__ import annotations

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

"""The ``flag`` battery: feature flags from a file or a remote configuration service.

Get the configured service from the registry (``services.flag()``) or a container;
pick ``static`` (the default: a JSON or TOML file, reloaded when it changes) or
``remotecfg`` (the remote service's server templates, cached and served stale on an
outage). In templates, ``{% load toolkit_flags %}{% flag "new_checkout" as on %}``; in
DRF views, :func:`~toolkit_batteries.flag.drf.flag_enabled` and
:func:`~toolkit_batteries.flag.drf.require_flag`.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Flag MICRO_PERCENT bucket truthy",
    request="flag_enabled flag_value subject_of tenant_of",
)

"""The ``analytics`` battery: product events, identify and group calls.

Get the configured service from the registry (``services.analytics()``) or a container;
pick ``log`` (the default: events to the ``toolkit.analytics`` logger) or ``analytics_b``
(a product-analytics provider's batch API, through its SDK, with a bounded buffer and a
flush on close) in settings. Properties are checked against ``max_properties`` and
``max_properties_bytes`` before anything is queued.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Analytics,
        AnalyticsDeliveryError,
        AnalyticsError,
        AnalyticsPropertiesError,
        Event,
    )

__all__ = [
    "Analytics",
    "AnalyticsDeliveryError",
    "AnalyticsError",
    "AnalyticsPropertiesError",
    "Event",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Analytics": "base",
    "AnalyticsDeliveryError": "base",
    "AnalyticsError": "base",
    "AnalyticsPropertiesError": "base",
    "Event": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

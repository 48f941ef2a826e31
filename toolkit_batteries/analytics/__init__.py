"""The ``analytics`` battery: product events, identify and group calls.

Get the configured service from the registry (``services.analytics()``) or a container;
pick ``log`` (the default: events to the ``toolkit.analytics`` logger) or ``analytics_b``
(a product-analytics provider's batch API, through its SDK, with a bounded buffer and a
flush on close) in settings. Properties are checked against ``max_properties`` and
``max_properties_bytes`` before anything is queued.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Analytics AnalyticsDeliveryError AnalyticsError AnalyticsPropertiesError Event",
)

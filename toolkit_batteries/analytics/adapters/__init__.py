"""The analytics adapters, by canonical name (default first, as in the catalog).

The provider module and class are named after the product (``posthog.PostHogAnalytics``).
Values are dotted paths, imported only when an adapter opens, so the provider SDK costs
nothing to a project on the ``log`` adapter. The vendor alias ``posthog`` ->
``analytics_b`` lives in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "log": "toolkit_batteries.analytics.adapters.log.LogAnalytics",
    "analytics_b": "toolkit_batteries.analytics.adapters.posthog.PostHogAnalytics",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers posthog.
ALIASES: dict[str, str] = {}

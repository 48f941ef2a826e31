"""The analytics adapters: ``analytics_b`` is PostHog (``posthog.PostHogAnalytics``, alias
``posthog`` from the catalog row); its SDK costs nothing to a project on ``log``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(__name__, "log.LogAnalytics analytics_b=posthog.PostHogAnalytics")

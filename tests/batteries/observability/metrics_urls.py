"""The test project's URLs plus ``/metrics`` (for tests/batteries/observability/test_metrics.py)."""

from django.urls import path

from tests.urls import urlpatterns as base
from toolkit_batteries.observability.metrics import metrics_view

urlpatterns = [*base, path("metrics", metrics_view)]

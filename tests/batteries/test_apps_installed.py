"""Each battery's Django app is installed under its label, with its name and service.

One table instead of the same three-line test in every battery's ``test_checks``.
"""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

CONFIGS = [
    ("analytics", "AnalyticsConfig"),
    ("cache", "CacheConfig"),
    ("cdn", "CDNConfig"),
    ("document", "DocumentConfig"),
    ("idempotency", "IdempotencyConfig"),
    ("lock", "LockConfig"),
    ("log", "LogConfig"),
    ("observability", "ObservabilityConfig"),
    ("secrets", "SecretsConfig"),
]


@pytest.mark.parametrize(("service", "config"), CONFIGS)
def test_the_app_is_installed_under_its_label(service: str, config: str) -> None:
    app = apps.get_app_config(f"toolkit_{service}")
    cls = getattr(importlib.import_module(f"toolkit_batteries.{service}.apps"), config)
    assert isinstance(app, cls)
    assert (app.name, app.service) == (f"toolkit_batteries.{service}", service)

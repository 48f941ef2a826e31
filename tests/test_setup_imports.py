"""``django.setup()`` with every battery app installed imports no vendor SDK.

A battery's SDK (redis, psycopg, celery, boto3, jwt, argon2, django_tasks, selenium, ...)
is imported inside its adapter module only, when that adapter opens; a project pays for
none of them at start-up. Measured in a fresh interpreter, as ``bench/foundation.py``
does, because this test process has long imported them all.
"""

from __future__ import annotations

import os

from bench.foundation import ROOT, VENDOR_MODULES, _setup_ms
from toolkit_batteries.core.catalog import SERVICES


def battery_apps() -> list[str]:
    return [
        spec.package
        for spec in SERVICES.values()
        if (ROOT / "toolkit_batteries" / spec.name / "apps.py").exists()
    ]


def test_the_list_covers_the_sdks_of_the_landed_batteries() -> None:
    for sdk in ("redis", "psycopg", "celery", "boto3", "jwt", "argon2", "django_tasks", "selenium"):
        assert sdk in VENDOR_MODULES
    assert {"toolkit_batteries.cache", "toolkit_batteries.queue"} <= set(battery_apps())


def test_django_setup_with_every_battery_app_imports_no_vendor_sdk() -> None:
    apps = [
        "django.contrib.contenttypes",
        "django.contrib.auth",
        "toolkit_batteries",
        *battery_apps(),
        "toolkit_batteries.api_runtime",
    ]
    extra = "import toolkit_batteries.services, toolkit_batteries.http.health"
    _, imported = _setup_ms(apps, dict(os.environ), extra=extra, runs=1)
    assert imported == []

"""Django settings for the distribution's own test suite (``manage.py`` uses them too)."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
USE_TZ = True
ALLOWED_HOSTS = ["*"]
ROOT_URLCONF = "tests.urls"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.messages",
    "toolkit_batteries",
    "toolkit_batteries.db",
    "toolkit_batteries.log",
    "toolkit_batteries.auth",
    "toolkit_batteries.password",
    "toolkit_batteries.session",
    "toolkit_batteries.crypto",
    "toolkit_batteries.cache",
    "toolkit_batteries.lock",
    "toolkit_batteries.queue",
    "toolkit_batteries.outbox",
    "toolkit_batteries.idempotency",
    "toolkit_batteries.scheduler",
    "toolkit_batteries.workflow",
    "toolkit_batteries.ratelimit",
    "toolkit_batteries.eventbus",
    "toolkit_batteries.resilience",
    "toolkit_batteries.storage",
    "toolkit_batteries.permission",
    "toolkit_batteries.secrets",
    "toolkit_batteries.tenant",
    "toolkit_batteries.router",
    "toolkit_batteries.flag",
    "toolkit_batteries.geo",
    "toolkit_batteries.i18n",
    "toolkit_batteries.observability",
    "toolkit_batteries.mailer",
    "toolkit_batteries.media",
    "toolkit_batteries.document",
    "toolkit_batteries.search",
    "toolkit_batteries.vectorstore",
    "toolkit_batteries.webhook",
    "toolkit_batteries.payment",
    "toolkit_batteries.billing",
    "toolkit_batteries.analytics",
    "toolkit_batteries.cdn",
    "toolkit_batteries.notification",
    "toolkit_batteries.ai",
    "toolkit_batteries.api_runtime",
    "rest_framework",
    "drf_spectacular",
]

# The admin (battery pages: queue messages and dead letters, sessions, ...) and its login.
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
STATIC_URL = "static/"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"},
}

# The real servers on this machine (DESIGN.md, "Tests and real services").
TEST_POSTGRES_DSN = os.environ.get(
    "TOOLKIT_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
TEST_REDIS_URL = os.environ.get("TOOLKIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")

TOOLKIT: dict = {}

# drf-spectacular reads SPECTACULAR_SETTINGS once, when it is first imported; the served
# test apps override it, but a process (an xdist worker) whose first import came from
# another test would keep these values, so they are the same here.
SPECTACULAR_SETTINGS = {"TITLE": "toolkit API", "VERSION": "0.0.0"}

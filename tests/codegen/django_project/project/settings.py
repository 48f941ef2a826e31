"""Settings of the codegen test project (``manage.py compile_schema`` / ``migrate`` / bench).

``TKPROJ_DATABASE`` picks the database: a SQLite file path (default ``db.sqlite3`` next to
``manage.py``) or a ``postgresql://`` URL.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "codegen-test-project-not-secret"
DEBUG = False
USE_TZ = True
ALLOWED_HOSTS = ["*"]
ROOT_URLCONF = "project.urls"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "rest_framework",
    "drf_spectacular",
    "toolkit_batteries",
    "toolkit_batteries.auth",
    "toolkit_batteries.api_runtime",
    "api",
]

MIDDLEWARE: list[str] = []


def _database(url: str) -> dict[str, object]:
    if not url.startswith(("postgres://", "postgresql://")):
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": url}
    parts = urlsplit(url)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/"),
        "USER": parts.username or "",
        "PASSWORD": parts.password or "",
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
    }


DATABASES = {"default": _database(os.environ.get("TKPROJ_DATABASE", str(BASE_DIR / "db.sqlite3")))}

REST_FRAMEWORK = {
    "EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {"TITLE": "toolkit API", "VERSION": "0.0.0"}

TOOLKIT = {"auth": {"adapter": "jwt", "options": {"jwt": {"secret": "x" * 32}}}}

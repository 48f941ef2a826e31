"""A fresh project with every SQL battery added: Django holds what Django already holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.subprocesses import run_python_json
from tests.test_template import BIN, NAME, _clean_env, manage, render

#: Every battery whose adapter keeps tables, added the way a user adds it.
SQL_BATTERIES = ("cache/db", "queue/db", "idempotency/db", "session/db", "scheduler/sqlserver")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = render(tmp_path_factory.mktemp("batteries") / "proj")
    for battery in SQL_BATTERIES:
        done = subprocess.run(
            [str(BIN / "toolkit"), "add", battery],
            cwd=root,
            capture_output=True,
            text=True,
            env=_clean_env(),
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_migrate_creates_every_battery_table_and_makemigrations_is_clean(project: Path) -> None:
    migrated = manage(project, "migrate", "--no-input")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    check = manage(project, "makemigrations", "--check", "--dry-run")
    assert check.returncode == 0, check.stdout + check.stderr
    code = (
        "import json, django\n"
        "django.setup()\n"
        "from django.apps import apps\n"
        "from django.db import connection\n"
        "tables = set(connection.introspection.table_names())\n"
        "models = [m for c in apps.get_app_configs() if c.label.startswith('toolkit_')\n"
        "          for m in c.get_models()]\n"
        "print(json.dumps({'labels': sorted({m._meta.app_label for m in models}),\n"
        "    'missing': [m._meta.db_table for m in models if m._meta.db_table not in tables]}))\n"
    )
    report = _python(project, code)
    assert report["missing"] == []
    for battery in SQL_BATTERIES:
        assert f"toolkit_{battery.split('/')[0]}" in report["labels"]


def test_services_return_djangos_own_objects(project: Path) -> None:
    assert manage(project, "migrate", "--no-input").returncode == 0
    code = (
        "import json, django\n"
        "django.setup()\n"
        "from django.core.cache import caches\n"
        "from django.db import connections, transaction\n"
        "from toolkit_batteries import services\n"
        "db = services.db()\n"
        "out = {'db_alias': db.alias,\n"
        "       'db_is_django': db.django_connection is connections['default'],\n"
        "       'cache_is_django': services.cache() is caches['default']}\n"
        "services.cache().set('k', 41)\n"
        "out['cache_shared'] = caches['default'].get('k')\n"
        "try:\n"
        "    with transaction.atomic():\n"
        "        services.queue().push('jobs', b'lost')\n"
        "        raise RuntimeError\n"
        "except RuntimeError:\n"
        "    pass\n"
        "with transaction.atomic():\n"
        "    services.queue().push('jobs', b'kept')\n"
        "out['queue_depth'] = services.queue().size('jobs')\n"
        "print(json.dumps(out))\n"
    )
    report = _python(project, code)
    assert report == {
        "db_alias": "default",
        "db_is_django": True,
        "cache_is_django": True,
        "cache_shared": 41,
        "queue_depth": 1,
    }


def _python(project: Path, code: str) -> dict:
    env = _clean_env() | {"DJANGO_SETTINGS_MODULE": f"{NAME}.settings"}
    return run_python_json(code, cwd=project, env=env)

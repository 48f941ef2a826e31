"""``toolkit_batteries.slots``: every Django slot derived from ``TOOLKIT`` with one signature.

Issue 24, item 4: ``settings.py`` derives ``CACHES``, ``STORAGES``, the ``EMAIL_*``
settings, ``DATABASES``, ``TASKS``, ``SESSION_ENGINE`` and ``LOCALE_PATHS`` from one module,
each function taking the ``TOOLKIT`` mapping (the environment applied on top), a loaded
``Config`` or ``None`` (``settings.TOOLKIT``); importing it imports no battery; and with
the derived settings in place, Django's handlers are the only registry: opening the slot
batteries registers no alias at run time (``core.slots.slot_alias`` is never asked).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from django.core.cache import caches
from django.core.files.storage import storages
from django.test import override_settings

from tests.subprocesses import run_python_json
from toolkit_batteries import services, slots
from toolkit_batteries.core import slots as core_slots
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import ConfigurationError

ROOT = Path(__file__).resolve().parents[2]


def _toolkit(tmp_path: Path) -> dict:
    return {
        "cache": {"adapter": "memory", "options": {"max_entries": 77}},
        "storage": {"adapter": "local", "options": {"root": str(tmp_path / "files")}},
        "mailer": {"adapter": "log"},
        "session": {"adapter": "memory"},
        "db": {"adapter": "sqlfile", "options": {"path": str(tmp_path / "app.sqlite3")}},
    }


def test_every_slot_takes_the_mapping_a_config_or_settings_toolkit_alike(tmp_path):
    toolkit = _toolkit(tmp_path)
    loaded = Config.load(toolkit, {})
    derive = [getattr(slots, name) for name in slots.__all__]
    assert sorted(slots.__all__) == [
        "caches",
        "databases",
        "email",
        "locale_paths",
        "sessions",
        "storages",
        "tasks",
    ]
    with override_settings(TOOLKIT=toolkit):
        for function in derive:
            assert function(toolkit) == function(loaded) == function(None), function.__name__
    assert slots.caches(toolkit)["default"]["OPTIONS"] == {"max_entries": 77}
    assert slots.sessions(toolkit) == "toolkit_batteries.session.engine"
    assert slots.databases(toolkit)["default"]["NAME"] == str(tmp_path / "app.sqlite3")


def test_the_environment_moves_a_slot_as_it_moves_the_container(tmp_path, monkeypatch, redis_url):
    toolkit = _toolkit(tmp_path)
    monkeypatch.setenv("CACHE__DEFAULT__ADAPTER", "kvserver")
    monkeypatch.setenv("CACHE__DEFAULT__URL", redis_url)
    entry = slots.caches(toolkit)["default"]
    assert entry["BACKEND"] == "toolkit_batteries.cache.adapters.kvserver.KVServerCache"
    assert entry["OPTIONS"]["url"] == redis_url


def test_an_unknown_session_adapter_fails_when_settings_load_naming_the_field():
    with pytest.raises(ConfigurationError) as info:
        slots.sessions({"session": {"adapter": "memcache-ish"}})
    assert "session" in str(info.value) and "adapter" in str(info.value)


def test_importing_slots_imports_no_battery(tmp_path):
    code = (
        "import json, sys\n"
        "import toolkit_batteries.slots\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('toolkit_batteries.')\n"
        "    and m.split('.')[1] not in ('core', 'slots'))))\n"
    )
    loaded = run_python_json(
        code, cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60
    )
    assert loaded == []


def test_derived_settings_leave_djangos_handlers_the_only_registry(tmp_path, monkeypatch):
    toolkit = _toolkit(tmp_path)
    asked: Counter = Counter()
    real = core_slots.slot_alias

    def recorded(handler, entry, **kwargs):
        asked[type(handler).__name__] += 1
        return real(handler, entry, **kwargs)

    monkeypatch.setattr(core_slots, "slot_alias", recorded)
    derived = {
        "CACHES": slots.caches(toolkit),
        "STORAGES": slots.storages(toolkit),
        "SESSION_ENGINE": slots.sessions(toolkit),
        **slots.email(toolkit),
    }
    with override_settings(TOOLKIT=toolkit, **derived):
        try:
            cache_aliases, storage_aliases = dict(caches.settings), dict(storages.backends)
            assert services.cache() is caches["default"]
            assert services.storage() is storages["default"]
            assert type(services.mailer()).__name__ == "LogMailer"
            session = services.session()
            session.create({"k": 1})
            assert dict(caches.settings) == cache_aliases
            assert dict(storages.backends) == storage_aliases
            assert asked == Counter()  # no alias registered for any slot battery
        finally:
            services.reset()

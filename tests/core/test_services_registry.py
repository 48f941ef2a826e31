"""toolkit_batteries.services: the settings-aware registry."""

from __future__ import annotations

import inspect
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from tests.core import fakes
from tests.core.fakes import config, no_batteries, path  # noqa: F401 - fixture
from toolkit_batteries import services
from toolkit_batteries.core import catalog
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ClosePanicError, InvalidOptionsError

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("no_batteries")


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    services.reset()
    yield
    services.reset()


def test_importing_reads_no_settings_and_no_vendor_sdk() -> None:
    code = (
        "import sys\n"
        "import toolkit_batteries.services as s\n"
        "from django.conf import settings\n"
        "assert not settings.configured, 'settings were configured'\n"
        "assert s._container is None\n"
        "vendors = {'redis', 'psycopg', 'psycopg_pool', 'structlog', 'boto3', 'celery'}\n"
        "loaded = sorted(vendors & {m.split('.')[0] for m in sys.modules})\n"
        "assert not loaded, loaded\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_one_module_accessor_per_service() -> None:
    for name in catalog.SERVICES:
        accessor = getattr(services, name)
        assert inspect.isfunction(accessor)
        assert accessor.__name__ == name
        assert accessor.__doc__ == getattr(Container, name).__doc__
        assert name in services.__all__
    assert {"plugin", "container", "close", "reset"} <= set(services.__all__)


def test_container_is_built_lazily_once_from_settings() -> None:
    assert services._container is None
    with override_settings(TOOLKIT={"cache": {"adapter": path("RecordingAdapter")}}):
        assert services._container is None
        built = services.container()
        assert services.container() is built
        assert built.config.service("cache").adapter == path("RecordingAdapter")
        assert isinstance(services.cache(), fakes.RecordingAdapter)
        assert services.cache() is built.cache()


def test_environment_overlays_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CACHE__DEFAULT__MAX_ENTRIES", "77")
    with override_settings(TOOLKIT={"cache": {"adapter": path("RecordingAdapter")}}):
        assert services.cache().ctx.options.max_entries == 77


def test_invalid_configuration_fails_on_use_and_is_not_cached() -> None:
    with override_settings(TOOLKIT={"cache": {"options": {"max_entries": "lots"}}}):
        with pytest.raises(InvalidOptionsError, match="max_entries"):
            services.cache()
        assert services._container is None


def test_override_settings_rebuilds_and_closes_the_old_container() -> None:
    with override_settings(TOOLKIT={"cache": {"adapter": path("RecordingAdapter")}}):
        first = services.cache()
        first_container = services.container()
        with override_settings(TOOLKIT={"cache": {"adapter": path("SharedAdapter")}}):
            assert first.closed == 1
            assert first_container.closed
            assert services.cache() is fakes.SHARED
        assert isinstance(services.cache(), fakes.RecordingAdapter)
        assert services.cache() is not first


def test_other_settings_do_not_rebuild() -> None:
    built = services.container()
    with override_settings(DEBUG=True):
        assert services.container() is built


def test_close_closes_and_the_next_call_builds_afresh() -> None:
    with override_settings(TOOLKIT={"cache": {"adapter": path("RecordingAdapter")}}):
        first = services.cache()
        old = services.container()
        services.close()
        assert old.closed
        assert first.closed == 1
        assert services._container is None
        assert services.cache() is not first
    services.close()
    services.close()  # nothing built: a no-op


def test_close_raises_the_gathered_failures() -> None:
    with override_settings(TOOLKIT={"cache": {"adapter": path("PanicCloseAdapter")}}):
        services.cache()
        with pytest.raises(ExceptionGroup) as caught:
            services.close()
    assert isinstance(caught.value.exceptions[0], ClosePanicError)


def test_reset_logs_close_failures_instead_of_raising(caplog: pytest.LogCaptureFixture) -> None:
    with override_settings(TOOLKIT={"cache": {"adapter": path("PanicCloseAdapter")}}):
        services.cache()
        with caplog.at_level(logging.WARNING, logger="toolkit"):
            services.reset()
    assert "cache.default: close crashed with RuntimeError" in caplog.text
    assert "boom" not in caplog.text


def test_plugin_through_the_registry() -> None:
    with override_settings(TOOLKIT={"plugins": {"sms": {"adapter": path("RecordingAdapter")}}}):
        sms = services.plugin("sms")
        assert services.plugin("sms") is sms
        assert sms.ctx.service == "sms"


def test_process_exit_closes_the_container() -> None:
    with override_settings(TOOLKIT={"cache": {"adapter": path("RecordingAdapter")}}):
        first = services.cache()
        assert services._atexit_registered
        services._close_at_exit()
        assert first.closed == 1
        assert services._container is None

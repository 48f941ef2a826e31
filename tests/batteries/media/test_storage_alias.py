"""``media`` keeps its files in a ``STORAGES`` alias instead of re-declaring a store (issue 24).

With ``options.storage`` naming an alias, ``services.media().store`` is Django's
``storages[alias]`` (the object ``services.storage()`` returns for that instance), so the
storage options are written once, under ``TOOLKIT["storage"]``.
"""

from __future__ import annotations

import pytest
from django.core.files.storage import storages
from django.test import override_settings

from toolkit_batteries import services, slots
from toolkit_batteries.core.errors import InvalidOptionsError


def _settings(tmp_path, alias: str) -> dict:
    return {
        "storage": {"adapter": "local", "options": {"root": str(tmp_path / "files")}},
        "media": {"adapter": "local", "options": {"storage": alias}},
    }


def test_media_stores_through_the_storages_alias(tmp_path):
    toolkit = _settings(tmp_path, "default")
    with override_settings(TOOLKIT=toolkit, STORAGES=slots.storages(toolkit)):
        try:
            media = services.media()
            assert media.store is storages["default"] is services.storage()
            media.store.put("originals/a.txt", b"kept once")
            assert (tmp_path / "files" / "originals" / "a.txt").read_bytes() == b"kept once"
        finally:
            services.reset()


@pytest.mark.parametrize("alias", ["nope", "staticfiles"])
def test_an_alias_that_is_no_battery_store_fails_naming_the_option(tmp_path, alias):
    toolkit = _settings(tmp_path, alias)
    with override_settings(TOOLKIT=toolkit, STORAGES=slots.storages(toolkit)):
        try:
            with pytest.raises(InvalidOptionsError) as info:
                services.media()
            assert 'media.default: option "storage"' in str(info.value)
        finally:
            services.reset()

"""``media`` keeps its files in a ``STORAGES`` alias instead of re-declaring a store (issue 24).

With ``options.storage`` naming an alias, ``services.media().store`` is Django's
``storages[alias]`` (the object ``services.storage()`` returns for that instance), so the
storage options are written once, under ``TOOLKIT["storage"]``. A rendered project does
exactly that: its ``media`` block names the ``default`` alias, and an image it stores lands
under ``MEDIA_ROOT`` and is served by the storage's presigned link under ``MEDIA_URL``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.storage import storages
from django.test import override_settings

from tests.subprocesses import run_python_json
from tests.test_template import NAME, _clean_env, render
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


RENDERED = r"""
import io
import json

import django
django.setup()
from django.conf import settings
from django.core.files.storage import storages
from django.test import Client
from PIL import Image

from toolkit_batteries import services

media = services.media()
buffer = io.BytesIO()
Image.new("RGB", (4, 3), "red").save(buffer, format="PNG")
info = media.put_image("originals/dot.png", buffer.getvalue(), content_type="image/png")
url = media.url("originals/dot.png", expires=60)
answer = Client(HTTP_HOST="localhost").get(url)
print(json.dumps({
    "options": settings.TOOLKIT["media"]["options"],
    "store_is_storages_default": media.store is storages["default"] is services.storage(),
    "size": [info.width, info.height],
    "on_disk": (settings.MEDIA_ROOT + "/originals/dot.png"),
    "url_under_media_url": url.startswith(settings.MEDIA_URL),
    "url": url,
    "served": answer.status_code,
    "served_bytes": b"".join(answer.streaming_content) == buffer.getvalue(),
}))
"""


def test_a_rendered_project_keeps_media_in_the_storages_default_alias(tmp_path):
    project = render(tmp_path / "proj")
    env = _clean_env() | {"TOOLKIT_ENV": "dev", "DJANGO_SETTINGS_MODULE": f"{NAME}.settings"}
    found = run_python_json(RENDERED, cwd=project, env=env, timeout=120)
    assert found["options"] == {"storage": "default"}  # no second store declared
    assert found["store_is_storages_default"] is True
    assert found["size"] == [4, 3]
    assert Path(found["on_disk"]).is_file()  # under MEDIA_ROOT, the storage's root
    assert found["url_under_media_url"] is True, found["url"]
    assert (found["served"], found["served_bytes"]) == (200, True)

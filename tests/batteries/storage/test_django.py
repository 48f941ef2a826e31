"""The storage is Django's: derived STORAGES, default_storage, FileField, collectstatic."""

from __future__ import annotations

import io

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage, storages
from django.core.management import call_command
from django.db import models
from django.test.utils import isolate_apps

from toolkit_batteries import services
from toolkit_batteries.core.errors import ConfigurationError
from toolkit_batteries.storage import django_storage_settings
from toolkit_batteries.storage.adapters.local import LocalStorage
from toolkit_batteries.storage.adapters.s3 import S3Storage

from .conftest import fetch, make_buckets, storage_block, unique


def configure(settings, toolkit, **overrides):
    settings.TOOLKIT = toolkit
    settings.STORAGES = django_storage_settings(toolkit, overrides=overrides or None)


def test_derived_storages_default_first(tmp_path):
    toolkit = {
        "storage": {
            "default": {"adapter": "local", "options": {"root": str(tmp_path)}},
            "uploads": {"adapter": "s3", "options": {"region": "eu-west-1"}},
        }
    }
    derived = django_storage_settings(toolkit, overrides={"uploads": {"bucket": "up"}})
    assert list(derived) == ["default", "uploads", "staticfiles"]
    assert derived["default"]["BACKEND"].endswith("local.LocalStorage")
    assert derived["uploads"]["OPTIONS"] == {
        "instance": "uploads",
        "region": "eu-west-1",
        "bucket": "up",
    }
    assert derived["staticfiles"]["BACKEND"] == (
        "django.contrib.staticfiles.storage.StaticFilesStorage"
    )
    with pytest.raises(ConfigurationError):
        django_storage_settings(toolkit, overrides={"nope": {"bucket": "x"}})
    with pytest.raises(ConfigurationError):
        django_storage_settings(toolkit, overrides={"default": {"location": "x"}})


def test_services_storage_is_default_storage(settings, tmp_path):
    configure(settings, {"storage": {"adapter": "local", "options": {"root": str(tmp_path)}}})
    storage = services.storage()
    assert storage is storages["default"]
    assert isinstance(storage, LocalStorage)
    name = default_storage.save("notes/a.txt", ContentFile(b"via default_storage"))
    assert storage.get(name) == b"via default_storage"
    assert (tmp_path / "notes" / "a.txt").read_bytes() == b"via default_storage"


@isolate_apps("toolkit_batteries.storage")
def test_file_field_uses_the_configured_storage(settings, tmp_path, live_url):
    block = {
        "adapter": "local",
        "options": {"root": str(tmp_path), "url_base": f"{live_url}/media/default"},
    }
    configure(settings, {"storage": block})

    class Document(models.Model):
        upload = models.FileField(upload_to="avatars/")

        class Meta:
            app_label = "toolkit_storage"

    document = Document()
    document.upload.save("me.png", ContentFile(b"\x89PNG avatar"), save=False)
    assert document.upload.name == "avatars/me.png"
    assert (tmp_path / "avatars" / "me.png").read_bytes() == b"\x89PNG avatar"
    assert fetch(document.upload.url) == (200, b"\x89PNG avatar")  # presigned, over HTTP
    with document.upload.open("rb") as handle:
        assert handle.read() == b"\x89PNG avatar"


def test_objstore_default_storage_with_its_bucket(settings, request, tmp_path):
    (bucket,) = make_buckets("objstore", request, 1)
    block = storage_block("objstore", request=request, tmp_path=tmp_path, instance="default")
    configure(settings, {"storage": block}, default={"bucket": bucket})
    storage = services.storage()
    assert storage is storages["default"] and isinstance(storage, S3Storage)
    assert storage.bucket_name == bucket
    name = default_storage.save("docs/x.txt", ContentFile(b"on the object store"))
    assert storage.get(name) == b"on the object store"
    assert storage.bucket(bucket).get(name) == b"on the object store"
    assert fetch(storage.url(name)) == (200, b"on the object store")


def test_objstore_without_own_bucket_says_so(settings, request, tmp_path):
    block = storage_block("objstore", request=request, tmp_path=tmp_path, instance="default")
    configure(settings, {"storage": block})
    with pytest.raises(ConfigurationError, match="no bucket of its own"):
        services.storage().put("a.txt", b"x")


def test_collectstatic_writes_through_the_battery(settings, tmp_path):
    source = tmp_path / "src"
    (source / "css").mkdir(parents=True)
    (source / "css" / "site.css").write_text("body { color: teal }")
    root = tmp_path / "static-root"
    toolkit = {
        "storage": {
            "default": {"adapter": "local", "options": {"root": str(tmp_path / "media")}},
            "staticfiles": {"adapter": "local", "options": {"root": str(root)}},
        }
    }
    configure(settings, toolkit)
    settings.STATICFILES_DIRS = [str(source)]
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, "django.contrib.staticfiles"]
    assert isinstance(storages["staticfiles"], LocalStorage)
    out = io.StringIO()
    call_command("collectstatic", interactive=False, verbosity=1, stdout=out)
    assert (root / "css" / "site.css").read_text() == "body { color: teal }"
    assert services.storage("staticfiles") is storages["staticfiles"]


def test_unique_instances_share_nothing(request, tmp_path):
    from .conftest import open_storage

    first, second = unique(), unique()
    c1, s1 = open_storage({"adapter": "local", "options": {"root": str(tmp_path / "1")}}, first)
    c2, s2 = open_storage({"adapter": "local", "options": {"root": str(tmp_path / "2")}}, second)
    assert s1 is not s2 and s1.root != s2.root
    c1.close(), c2.close()

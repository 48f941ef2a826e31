"""Open the storage battery the real way (configuration, then a Container) on every adapter.

``local`` writes under a temporary root and is served by the battery's view on a live
WSGI server on 127.0.0.1; ``objstore`` and ``objstore_b`` talk to moto's S3 server mode
(a real HTTP S3 implementation) started by the session on 127.0.0.1. Each test gets a
unique instance name and fresh buckets; runtime ``storages`` aliases are forgotten after
each test.
"""

from __future__ import annotations

import contextlib
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from tests.ports import free_port
from tests.support.processes import serve_in_thread

VARIANTS = ("local", "objstore", "objstore_b")
ACCESS_KEY = "AKIATESTSTORAGE0001"
SECRET_KEY = "storage-test-secret-access-key-0123456789"
URL_SECRET = "storage-test-url-signing-secret-0123456789"


def unique(prefix: str = "t") -> str:
    """Return a fresh lower-case name (instances, buckets)."""
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def raw_client(endpoint: str) -> Any:
    """Return a plain boto3 S3 client on the moto server (for setup and checks)."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, signature_version="s3v4"),
    )


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def storage_server() -> Iterator[str]:
    """Serve Django's WSGI application on 127.0.0.1 (threads); yield its base URL."""
    from socketserver import ThreadingMixIn

    from django.core.handlers.wsgi import WSGIHandler

    class Threading(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    server = make_server(
        "127.0.0.1", free_port(), WSGIHandler(), server_class=Threading, handler_class=_Quiet
    )
    yield from serve_in_thread(server)


@pytest.fixture
def live_url(storage_server, settings) -> str:
    """Return the live server's base URL, with this package's URLconf in force."""
    settings.ROOT_URLCONF = "tests.batteries.storage.urls"
    return storage_server


def fetch(url: str, *, method: str = "GET", data: bytes | None = None) -> tuple[int, bytes]:
    """Return ``(status, body)`` of an HTTP request (errors included, never raised)."""
    headers = {"Content-Type": "application/octet-stream"} if data is not None else {}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def storage_block(
    variant: str, *, request: pytest.FixtureRequest, tmp_path, instance: str, **extra: Any
) -> dict[str, Any]:
    """Return the TOOLKIT envelope selecting ``variant`` (buckets are made by the caller)."""
    if variant == "local":
        live = request.getfixturevalue("live_url")
        options = {
            "root": str(tmp_path / "objects"),
            "url_base": f"{live}/media/{instance}",
            "secret": URL_SECRET,
        }
    else:
        options = {
            "endpoint": request.getfixturevalue("moto_endpoint"),
            "access_key_id": ACCESS_KEY,
            "secret_access_key": SECRET_KEY,
            "allow_insecure": True,
            "allow_private": True,
        }
        if variant == "objstore_b":
            options["account_id"] = "0123456789abcdef0123456789abcdef"
            options["region"] = "auto"
    options.update(extra)
    return {"adapter": variant, "options": options}


@dataclass
class Opened:
    """An opened storage, its container, its variant and buckets made for the test."""

    variant: str
    storage: Any
    container: Any
    instance: str
    buckets: list[str] = field(default_factory=list)


def make_buckets(variant: str, request: pytest.FixtureRequest, count: int) -> list[str]:
    """Return ``count`` fresh bucket names, created on the object store for S3 variants."""
    names = [unique("b") for _ in range(count)]
    if variant != "local":
        client = raw_client(request.getfixturevalue("moto_endpoint"))
        for name in names:
            client.create_bucket(Bucket=name)
    return names


def open_storage(block: dict[str, Any], instance: str) -> tuple[Any, Any]:
    """Open ``block`` through a Container; return ``(container, storage)``."""
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    container = Container(Config.load({"storage": {instance: block}}, {}))
    return container, container.storage(instance)


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, tmp_path) -> Iterator[Opened]:
    instance = unique()
    buckets = make_buckets(request.param, request, 2)
    block = storage_block(request.param, request=request, tmp_path=tmp_path, instance=instance)
    # The serving view finds the instance through services (settings.TOOLKIT), which
    # derives the same entry, hence the same storages alias and object.
    request.getfixturevalue("settings").TOOLKIT = {"storage": {instance: block}}
    container, storage = open_storage(block, instance)
    try:
        yield Opened(request.param, storage, container, instance, buckets)
    finally:
        container.close()


@pytest.fixture(autouse=True)
def _forget_runtime_storages() -> Iterator[None]:
    yield
    from django.core.files.storage import storages

    for alias in [a for a in storages.backends if a.startswith("toolkit_storage_")]:
        storages.backends.pop(alias, None)
        storages._storages.pop(alias, None)
    with contextlib.suppress(Exception):
        from toolkit_batteries import services

        services.reset()

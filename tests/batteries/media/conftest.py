"""Open the media battery the real way (configuration, then a Container) on every adapter.

``local`` writes under a temporary root; its presigned URLs are served by the battery's
view on a live WSGI server on 127.0.0.1. ``objstore`` talks to moto's S3 server mode (a
real HTTP S3 implementation) on 127.0.0.1, the storage tests' session fixture. Images are
made by Pillow and videos by ffmpeg, in the tests.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.batteries.storage.conftest import (  # noqa: F401 - session fixtures reused
    ACCESS_KEY,
    SECRET_KEY,
    URL_SECRET,
    fetch,
    raw_client,
    storage_server,
    unique,
)

VARIANTS = ("local", "objstore")


@pytest.fixture
def live_url(storage_server, settings) -> str:  # noqa: F811
    """Return the live server's base URL, with this package's URLconf in force."""
    settings.ROOT_URLCONF = "tests.batteries.media.urls"
    return storage_server


def image_bytes(
    size: tuple[int, int] = (640, 480),
    fmt: str = "JPEG",
    mode: str = "RGB",
    color: Any = (200, 30, 30),
) -> bytes:
    """Return a real image made by Pillow (a colour block with a contrasting corner)."""
    from PIL import Image, ImageDraw

    picture = Image.new(mode, size, color)
    draw = ImageDraw.Draw(picture)
    draw.rectangle((0, 0, size[0] // 4, size[1] // 4), fill=(0, 0, 255, 255)[: len(mode)])
    out = io.BytesIO()
    picture.save(out, format=fmt)
    return out.getvalue()


def noise_bytes(size: tuple[int, int] = (400, 400), fmt: str = "PNG") -> bytes:
    """Return a real image of random pixels (it does not compress: large on purpose)."""
    import os

    from PIL import Image

    picture = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    out = io.BytesIO()
    picture.save(out, format=fmt)
    return out.getvalue()


def decode(data: bytes) -> Any:
    """Open and fully decode ``data`` with Pillow (what a client of the rendition does)."""
    from PIL import Image

    picture = Image.open(io.BytesIO(data))
    picture.load()
    return picture


@pytest.fixture(scope="session")
def clip(tmp_path_factory) -> bytes:
    """Return a real 2-second 320x240 H.264 MP4 made by ffmpeg (testsrc)."""
    out = tmp_path_factory.mktemp("video") / "clip.mp4"
    subprocess.run(
        [
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi",
            "-i", "testsrc=duration=2:size=320x240:rate=10",
            "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", str(out),
        ],
        check=True,
        timeout=60,
    )  # fmt: skip
    return out.read_bytes()


def media_block(
    variant: str, *, request: pytest.FixtureRequest, tmp_path, instance: str, **extra: Any
) -> dict[str, Any]:
    """Return the TOOLKIT envelope selecting ``variant`` (the bucket is made here)."""
    if variant == "local":
        live = request.getfixturevalue("live_url")
        options: dict[str, Any] = {
            "root": str(tmp_path / "media"),
            "base_url": f"{live}/m/{instance}",
        }
    else:
        endpoint = request.getfixturevalue("moto_endpoint")
        bucket = unique("m")
        raw_client(endpoint).create_bucket(Bucket=bucket)
        options = {
            "endpoint": endpoint,
            "bucket": bucket,
            "access_key_id": ACCESS_KEY,
            "secret_access_key": SECRET_KEY,
            "allow_insecure": True,
            "allow_private": True,
        }
    options.update(extra)
    return {"adapter": variant, "options": options}


@dataclass
class Opened:
    """An opened media service, its container, variant and instance."""

    variant: str
    media: Any
    container: Any
    instance: str
    block: dict[str, Any]


def open_media(request: pytest.FixtureRequest, variant: str, tmp_path, **extra: Any) -> Opened:
    """Open a fresh media instance of ``variant`` through a Container (closed at teardown)."""
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    instance = unique()
    block = media_block(variant, request=request, tmp_path=tmp_path, instance=instance, **extra)
    # The serving view finds the instance through services (settings.TOOLKIT).
    request.getfixturevalue("settings").TOOLKIT = {"media": {instance: block}}
    container = Container(Config.load({"media": {instance: block}}, {}))
    request.addfinalizer(container.close)
    return Opened(variant, container.media(instance), container, instance, block)


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, tmp_path) -> Opened:
    return open_media(request, request.param, tmp_path)


@pytest.fixture(autouse=True)
def _forget_services() -> Iterator[None]:
    yield
    with contextlib.suppress(Exception):
        from toolkit_batteries import services

        services.reset()

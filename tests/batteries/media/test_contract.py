"""One contract for every media adapter: the same calls give the same answers.

Runs against ``local`` (files under a temporary root, presigned URLs served by the
battery's view on a live server) and ``objstore`` (moto's S3 server mode on 127.0.0.1),
with images made by Pillow and a video made by ffmpeg in the test.
"""

from __future__ import annotations

import io
import struct
import time
import zlib
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from toolkit_batteries.core.errors import http_status
from toolkit_batteries.media import (
    DERIVED_PREFIX,
    ImageTooLargeError,
    Media,
    MediaDurationError,
    MediaError,
    MediaNotFoundError,
    MediaTimeoutError,
    MediaTooLargeError,
    MediaToolError,
    UnsupportedMediaError,
)
from toolkit_batteries.storage import InvalidKeyError, Storage

from .conftest import decode, fetch, image_bytes, noise_bytes, open_media

BAD_KEYS = ["../escape.png", "a/../../x.png", "/etc/passwd", "a\\b.png", "a\x00b", "a//b", ""]


def png_with_header(width: int, height: int) -> bytes:
    """Return a tiny PNG whose IHDR announces ``width`` x ``height`` (a decompression bomb)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\x00" * 64)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def renditions(media: Media, key: str) -> list[str]:
    """Return the names of the renditions stored for ``key``."""
    try:
        return media.store.listdir(media.derived_prefix(key))[1]
    except FileNotFoundError:
        return []


class TestMediaContract:
    """The same calls, the same answers, on every adapter."""

    def test_identity(self, opened):
        media = opened.media
        assert isinstance(media, Media) and media.adapter_name == opened.variant
        assert media.service_name == "media" and media.instance == opened.instance
        assert opened.container.media(opened.instance) is media
        assert isinstance(media.storage, Storage)  # it sits on the storage battery

    @pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF"])
    def test_put_image_formats(self, opened, fmt):
        raw = image_bytes((320, 200), fmt)
        info = opened.media.put_image(f"up/pic.{fmt.lower()}", raw)
        assert (info.format, info.width, info.height, info.size) == (fmt, 320, 200, len(raw))
        assert info.content_type == f"image/{fmt.lower()}"
        assert opened.media.get(info.key) == raw
        assert opened.media.image_info(info.key) == info

    def test_put_image_from_file_and_upload(self, opened):
        raw = image_bytes((64, 48), "PNG")
        assert opened.media.put_image("f/stream.png", io.BytesIO(raw)).width == 64
        upload = SimpleUploadedFile("avatar.png", raw, content_type="image/png")
        assert opened.media.put_image("f/upload.png", upload).height == 48
        assert opened.media.get("f/upload.png") == raw

    def test_not_an_image_is_refused_and_nothing_stored(self, opened):
        media = opened.media
        cases = {
            "text.png": b"hello, not an image",
            "truncated.jpg": image_bytes((400, 300), "JPEG")[:600],
            "bitmap.bmp": image_bytes((40, 30), "BMP"),  # a real image, not accepted
            "tiff.tif": image_bytes((40, 30), "TIFF"),
        }
        for key, raw in cases.items():
            with pytest.raises(UnsupportedMediaError) as caught:
                media.put_image(key, raw)
            assert caught.value.code == "unsupported_media_type"
            assert http_status(caught.value.code) == 415
            assert not media.exists(key)

    def test_max_download_bytes(self, request, tmp_path, opened):
        small = open_media(request, opened.variant, tmp_path, max_download_bytes=2000)
        raw = noise_bytes((400, 400), "PNG")
        assert len(raw) > 2000
        for data in (raw, io.BytesIO(raw), SimpleUploadedFile("x.png", raw)):
            with pytest.raises(MediaTooLargeError) as caught:
                small.media.put_image("big.png", data)
            assert http_status(caught.value.code) == 413
            assert "max_download_bytes" in str(caught.value)
        assert not small.media.exists("big.png")
        fits = image_bytes((8, 8), "PNG")
        assert len(fits) <= 2000 and small.media.put_image("ok.png", fits).width == 8

    def test_max_pixels_refuses_from_the_header(self, request, tmp_path, opened, monkeypatch):
        from PIL import ImageFile

        small = open_media(request, opened.variant, tmp_path, max_pixels=10_000)
        assert small.media.put_image("ok.png", image_bytes((100, 100), "PNG")).width == 100
        wide, fits = image_bytes((101, 100), "PNG"), image_bytes((99, 100), "PNG")
        decoded = []
        real_load = ImageFile.ImageFile.load
        monkeypatch.setattr(
            ImageFile.ImageFile, "load", lambda self: decoded.append(1) or real_load(self)
        )
        with pytest.raises(ImageTooLargeError) as caught:
            small.media.put_image("wide.png", wide)
        assert caught.value.code == "payload_too_large"
        # A bomb: a few hundred bytes announcing 60000 x 60000 pixels.
        bomb = png_with_header(60_000, 60_000)
        assert len(bomb) < 500
        with pytest.raises(ImageTooLargeError):
            opened.media.put_image("bomb.png", bomb)
        # Far past Pillow's own limit: its DecompressionBombError is mapped too.
        with pytest.raises(ImageTooLargeError):
            opened.media.put_image("bomb2.png", png_with_header(2_000_000, 2_000_000))
        assert decoded == [], "no pixel was decoded"
        small.media.put_image("fits.png", fits)
        assert decoded, "an accepted image is decoded once before it is stored"
        assert not opened.media.exists("bomb.png") and not small.media.exists("wide.png")

    def test_max_pixels_above_pillows_limit_is_the_one_in_force(self, request, tmp_path, opened):
        from PIL import Image

        big = open_media(request, opened.variant, tmp_path, max_pixels=400_000_000)
        big.media.put_image("a.png", image_bytes((10, 10), "PNG"))
        assert Image.MAX_IMAGE_PIXELS is None or Image.MAX_IMAGE_PIXELS >= 400_000_000

    @pytest.mark.parametrize(
        ("fit", "box", "expected"),
        [
            ("contain", (200, 200), (200, 150)),
            ("contain", (2000, 2000), (640, 480)),  # never enlarged
            ("cover", (200, 200), (200, 200)),
            ("fill", (100, 300), (100, 300)),
        ],
    )
    def test_rendition_geometry(self, opened, fit, box, expected):
        opened.media.put_image("g/pic.jpg", image_bytes((640, 480), "JPEG"))
        rendition = opened.media.rendition("g/pic.jpg", *box, fit=fit)
        assert (rendition.width, rendition.height) == expected
        assert rendition.key.startswith(DERIVED_PREFIX) and rendition.derived
        picture = decode(opened.media.get(rendition.key))
        assert picture.size == expected and picture.format == "JPEG"

    def test_rendition_one_side_and_crop(self, opened):
        opened.media.put_image("g/pic.png", image_bytes((640, 480), "PNG"))
        assert opened.media.rendition("g/pic.png", width=320).height == 240
        assert opened.media.rendition("g/pic.png", height=120).width == 160
        cropped = opened.media.rendition("g/pic.png", 80, 60, crop=(0, 0, 160, 120))
        picture = decode(opened.media.get(cropped.key)).convert("RGB")
        assert picture.size == (80, 60)
        assert picture.getpixel((40, 30)) == (0, 0, 255)  # the blue corner, enlarged to fill

    @pytest.mark.parametrize("fmt", ["jpeg", "png", "webp"])
    def test_format_conversion(self, opened, fmt):
        opened.media.put_image(
            "c/alpha.png", image_bytes((300, 300), "PNG", "RGBA", (0, 200, 0, 128))
        )
        rendition = opened.media.rendition("c/alpha.png", 100, 100, format=fmt)
        picture = decode(opened.media.get(rendition.key))
        assert picture.format == fmt.upper() and picture.size == (100, 100)
        assert rendition.content_type == f"image/{fmt}"
        assert rendition.key.endswith({"jpeg": ".jpg", "png": ".png", "webp": ".webp"}[fmt])

    def test_thumbnail_is_cached_then_rederived_after_ttl(self, request, tmp_path, opened):
        fresh = open_media(request, opened.variant, tmp_path, derived_ttl="30s")
        media = fresh.media
        media.put_image("t/p.jpg", image_bytes((640, 480), "JPEG"))
        key = media.thumbnail("t/p.jpg", 64, 64)
        assert media.thumbnail("t/p.jpg", 64, 64) == key
        assert decode(media.get(key)).size == (64, 64)
        assert media.rendition("t/p.jpg", 64, 64, fit="cover").derived is False  # served
        now = time.time()
        media.clock = lambda: now + 31  # past derived_ttl
        assert media.rendition("t/p.jpg", 64, 64, fit="cover").derived is True
        media.clock = time.time
        assert media.rendition("t/p.jpg", 64, 64, fit="cover").derived is False
        assert media.rendition("t/p.jpg", 64, 64, fit="cover", refresh=True).derived is True

    def test_replacing_the_source_drops_renditions(self, opened):
        media = opened.media
        media.put_image("r/p.png", image_bytes((200, 100), "PNG", color=(255, 0, 0)))
        key = media.thumbnail("r/p.png", 20, 10)
        assert media.exists(key)
        media.put_image("r/p.png", image_bytes((200, 100), "PNG", color=(0, 255, 0)))
        assert not media.exists(key)
        again = media.rendition("r/p.png", 20, 10, fit="cover")
        assert again.key == key and again.derived
        assert decode(media.get(key)).convert("RGB").getpixel((15, 8)) == (0, 255, 0)
        media.delete("r/p.png")
        assert not media.exists("r/p.png") and not media.exists(key)
        with pytest.raises(MediaNotFoundError) as caught:
            media.thumbnail("r/p.png", 20, 10)
        assert isinstance(caught.value, FileNotFoundError) and http_status(caught.value.code) == 404

    def test_bad_rendition_arguments(self, opened):
        opened.media.put_image("b/p.png", image_bytes((50, 50), "PNG"))
        calls = [
            lambda: opened.media.rendition("b/p.png"),
            lambda: opened.media.rendition("b/p.png", 0, 10),
            lambda: opened.media.rendition("b/p.png", 10, None, fit="cover"),
            lambda: opened.media.rendition("b/p.png", 10, 10, fit="stretch"),
            lambda: opened.media.rendition("b/p.png", 10, 10, format="bmp"),
            lambda: opened.media.rendition("b/p.png", 10, 10, quality=0),
            lambda: opened.media.rendition("b/p.png", 10, 10, crop=(10, 10, 5, 5)),
            lambda: opened.media.rendition("b/p.png", 10, 10, crop=(0, 0, 60, 60)),
            lambda: opened.media.rendition("b/p.png", 20000, 10),
        ]
        for call in calls:
            with pytest.raises(MediaError) as caught:
                call()
            assert http_status(caught.value.code) in (400, 413)
        assert renditions(opened.media, "b/p.png") == []  # nothing was stored
        opened.media.thumbnail("b/p.png", 10, 10)
        assert len(renditions(opened.media, "b/p.png")) == 1

    def test_presigned_url_over_http(self, opened):
        media = opened.media
        raw = image_bytes((120, 90), "JPEG")
        media.put_image("u/p.jpg", raw)
        assert fetch(media.url("u/p.jpg")) == (200, raw)
        thumb = media.thumbnail("u/p.jpg", 30, 30)
        status, body = fetch(media.url(thumb))
        assert status == 200 and decode(body).size == (30, 30)
        query = parse_qs(urlsplit(media.url("u/p.jpg")).query)
        lifetime = query["e"] if opened.variant == "local" else query["X-Amz-Expires"]
        assert lifetime == ["3600"]  # presign_ttl's default, 1h

    def test_presign_ttl(self, request, tmp_path, opened):
        short = open_media(request, opened.variant, tmp_path, presign_ttl="1s")
        raw = image_bytes((20, 20), "PNG")
        short.media.put_image("s/p.png", raw)
        url = short.media.url("s/p.png")
        query = parse_qs(urlsplit(url).query)
        assert (query["e"] if opened.variant == "local" else query["X-Amz-Expires"]) == ["1"]
        if opened.variant == "local":
            assert fetch(url) == (200, raw)
            time.sleep(2.1)
            assert fetch(url)[0] == 403
            assert fetch(url.split("?")[0])[0] == 403  # unsigned
        assert "e=120" in short.media.url("s/p.png", expires=120) or "X-Amz-Expires=120" in (
            short.media.url("s/p.png", expires=120)
        )

    @pytest.mark.parametrize("key", BAD_KEYS, ids=lambda k: repr(k)[:16])
    def test_bad_keys_refused(self, opened, key, clip):
        media = opened.media
        raw = image_bytes((10, 10), "PNG")
        calls = [
            lambda: media.put_image(key, raw),
            lambda: media.get(key),
            lambda: media.exists(key),
            lambda: media.delete(key),
            lambda: media.url(key),
            lambda: media.thumbnail(key, 10, 10),
            lambda: media.put_video(key, clip),
            lambda: media.probe(key),
            lambda: media.poster(key),
        ]
        for call in calls:
            with pytest.raises(InvalidKeyError):
                call()
        with pytest.raises(InvalidKeyError):
            media.put_image(DERIVED_PREFIX + "forged.png", raw)

    # ------------------------------------------------------------------ video

    def test_video_probe_poster_and_rendition(self, opened, clip):
        media = opened.media
        info = media.put_video("v/clip.mp4", clip)
        assert (info.width, info.height, info.codec) == (320, 240, "h264")
        assert abs(info.duration - 2.0) < 0.2 and info.size == len(clip)
        assert media.get("v/clip.mp4") == clip
        assert media.probe("v/clip.mp4") == info
        poster = media.poster("v/clip.mp4", at=1.0, width=160, height=160)
        picture = decode(media.get(poster))
        assert picture.format == "JPEG" and picture.size == (160, 120)
        assert media.poster("v/clip.mp4", at=1.0, width=160, height=160) == poster
        full = decode(media.get(media.poster("v/clip.mp4", format="png")))
        assert full.size == (320, 240) and full.format == "PNG"
        small = media.video_rendition("v/clip.mp4", height=120)
        probed = media.probe(small)
        assert (probed.width, probed.height, probed.codec) == (160, 120, "h264")
        assert abs(probed.duration - 2.0) < 0.3
        webm = media.probe(media.video_rendition("v/clip.mp4", width=160, format="webm"))
        assert (webm.width, webm.codec) == (160, "vp8")
        assert fetch(media.url("v/clip.mp4"))[1] == clip

    def test_max_duration(self, request, tmp_path, opened, clip):
        short = open_media(request, opened.variant, tmp_path, max_duration="1s")
        with pytest.raises(MediaDurationError) as caught:
            short.media.put_video("v/long.mp4", clip)
        assert "max_duration" in str(caught.value) and http_status(caught.value.code) == 400
        assert not short.media.exists("v/long.mp4")
        # A video stored before the limit was lowered is refused by derivations too.
        opened.media.put_video("v/long.mp4", clip)
        limited = short.media.on(opened.media.store)
        with pytest.raises(MediaDurationError):
            limited.poster("v/long.mp4")
        with pytest.raises(MediaDurationError):
            limited.video_rendition("v/long.mp4", height=120)

    def test_video_limits_and_missing(self, request, tmp_path, opened, clip):
        small = open_media(request, opened.variant, tmp_path, max_download_bytes=len(clip) - 1)
        with pytest.raises(MediaTooLargeError):
            small.media.put_video("v/clip.mp4", io.BytesIO(clip))
        assert not small.media.exists("v/clip.mp4")
        opened.media.put_video("v/clip.mp4", clip)
        with pytest.raises(MediaError, match="past the end"):
            opened.media.poster("v/clip.mp4", at=5.0)
        for call in (
            lambda: opened.media.probe("v/none.mp4"),
            lambda: opened.media.poster("v/none.mp4"),
            lambda: opened.media.video_rendition("v/none.mp4"),
        ):
            with pytest.raises(MediaNotFoundError):
                call()
        with pytest.raises(MediaError):
            opened.media.video_rendition("v/clip.mp4", format="avi")

    def test_not_a_video(self, opened):
        with pytest.raises(UnsupportedMediaError):
            opened.media.put_video("v/x.mp4", b"definitely not a video" * 100)
        with pytest.raises(UnsupportedMediaError):  # an image has no duration/stream we take
            opened.media.put_video("v/y.mp4", image_bytes((20, 20), "PNG"))
        assert not opened.media.exists("v/x.mp4") and not opened.media.exists("v/y.mp4")

    def test_tool_timeout_and_missing_binary(self, request, tmp_path, opened, clip):
        media = opened.media
        media.put_video("v/clip.mp4", clip)
        media.ffmpeg_timeout = 0.001
        with pytest.raises(MediaTimeoutError) as caught:
            media.video_rendition("v/clip.mp4", height=120)
        assert http_status(caught.value.code) == 504
        broken = open_media(request, opened.variant, tmp_path, ffprobe="/nonexistent/ffprobe")
        with pytest.raises(MediaToolError) as caught:
            broken.media.put_video("v/clip.mp4", clip)
        assert "ffprobe" in str(caught.value) and "/nonexistent" not in str(caught.value)

    # ------------------------------------------------------------------ on a storage bucket

    def test_on_a_storage_bucket(self, request, tmp_path, opened):
        from tests.batteries.storage.conftest import make_buckets, storage_block, unique
        from toolkit_batteries.core.config import Config
        from toolkit_batteries.core.container import Container

        instance = unique()
        bucket_name = make_buckets(opened.variant, request, 1)[0]
        block = storage_block(opened.variant, request=request, tmp_path=tmp_path, instance=instance)
        settings = request.getfixturevalue("settings")
        settings.TOOLKIT = {**settings.TOOLKIT, "storage": {instance: block}}
        container = Container(Config.load({"storage": {instance: block}}, {}))
        request.addfinalizer(container.close)
        bucket = container.storage(instance).bucket(bucket_name)
        avatars = opened.media.on(bucket)
        assert avatars.storage is bucket and opened.media.storage is not bucket
        raw = image_bytes((256, 256), "PNG")
        avatars.put_image("u42/original", raw)
        assert bucket.get("u42/original") == raw  # stored through storage
        thumb = avatars.thumbnail("u42/original", 64, 64, format="webp")
        assert bucket.exists(thumb)
        status, body = fetch(avatars.url(thumb))
        assert status == 200 and decode(body).size == (64, 64)
        with pytest.raises(TypeError):
            opened.media.on(object())

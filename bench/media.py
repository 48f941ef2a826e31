"""Media benchmark: thumbnail derivation against raw Pillow doing the same work.

* A 256x256 ``cover`` WEBP thumbnail of a 1600x1200 JPEG, derived through
  ``media.rendition(..., refresh=True)`` on the ``local`` adapter (opened by a Container):
  the source read from the store, the header checked against ``max_pixels``, the render,
  the rendition written back to the store. The baseline is raw Pillow on the same bytes
  in memory: open, ``draft`` (the JPEG decoder's reduced scale), EXIF transpose, the same
  centre crop and Lanczos resize, WEBP at quality 85 into memory (no file I/O at all, so
  the battery's store reads and writes count against it). Target: at least 0.9x.

Figures are derivations per second; the two sides alternate and the best of several
rounds is kept, so a busy machine slows both alike.
"""

from __future__ import annotations

import io
import shutil
import tempfile
import uuid

from bench._measure import best_interleaved
from bench.foundation import Result

SOURCE_SIZE = (1600, 1200)
BOX = (256, 256)


def _source() -> bytes:
    """Return a 1600x1200 JPEG with gradients and shapes (a photo-like load for the codec)."""
    from PIL import Image, ImageDraw

    red = Image.linear_gradient("L").resize(SOURCE_SIZE)
    green = Image.radial_gradient("L").resize(SOURCE_SIZE)
    blue = red.transpose(Image.Transpose.ROTATE_180)
    picture = Image.merge("RGB", (red, green, blue))
    draw = ImageDraw.Draw(picture)
    for i in range(0, SOURCE_SIZE[0], 40):
        draw.ellipse((i, i % 600, i + 120, i % 600 + 90), outline=(255, 255, 0), width=3)
    out = io.BytesIO()
    picture.save(out, format="JPEG", quality=90)
    return out.getvalue()


def _raw_thumbnail(data: bytes) -> bytes:
    """Raw Pillow: the same cover thumbnail the battery derives, in memory."""
    import math

    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(data)) as opened:
        width, height = opened.size
        scale = max(BOX[0] / width, BOX[1] / height)
        opened.draft("RGB", (math.ceil(width * scale), math.ceil(height * scale)))
        frame = ImageOps.exif_transpose(opened)
        sw, sh = frame.size
        ratio = BOX[0] / BOX[1]
        if sw / sh > ratio:
            cut = sh * ratio
            box = ((sw - cut) / 2, 0, (sw + cut) / 2, sh)
        else:
            cut = sw / ratio
            box = (0, (sh - cut) / 2, sw, (sh + cut) / 2)
        frame = frame.resize(BOX, Image.Resampling.LANCZOS, box=box, reducing_gap=3.0)
        out = io.BytesIO()
        frame.save(out, format="WEBP", quality=85)
        return out.getvalue()


def _measure(refresh: bool) -> tuple[float, float]:
    """Return (ours, raw Pillow) derivations per second on a fresh ``local`` media instance."""
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    root = tempfile.mkdtemp()
    instance = f"bench{uuid.uuid4().hex[:8]}"
    container = Container(
        Config.load({"media": {instance: {"adapter": "local", "options": {"root": root}}}}, {})
    )
    try:
        media = container.media(instance)
        data = _source()
        media.put_image("bench/source.jpg", data)
        check = media.rendition("bench/source.jpg", *BOX, fit="cover", format="webp")
        assert (check.width, check.height) == BOX and len(_raw_thumbnail(data)) > 0

        def ours(n: int) -> None:
            rendition, delete = media.rendition, media.store.delete
            for _ in range(n):
                if not refresh:  # a cache miss: no rendition yet (as after an upload)
                    delete(check.key)
                made = rendition(
                    "bench/source.jpg", *BOX, fit="cover", format="webp", refresh=refresh
                )
                assert made.derived

        def base(n: int) -> None:
            for _ in range(n):
                _raw_thumbnail(data)

        ours(3), base(3)
        return best_interleaved(ours, base, 20, repeats=5)
    finally:
        container.close()
        shutil.rmtree(root, ignore_errors=True)


def bench_thumbnail() -> Result:
    """Time a thumbnail derived on a cache miss against raw Pillow on the same source."""
    mine, theirs = _measure(refresh=False)
    return Result(
        "media thumbnail (cache miss) 1600x1200 JPEG -> 256x256 WEBP vs raw Pillow",
        mine,
        theirs,
        "derivations/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        ",.1f",
    )


def bench_thumbnail_refresh() -> Result:
    """Time a re-derivation over a stored rendition (an atomic replace) against raw Pillow."""
    mine, theirs = _measure(refresh=True)
    return Result(
        "media thumbnail re-derived over the stored one vs raw Pillow",
        mine,
        theirs,
        "derivations/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
        ",.1f",
    )


BENCHMARKS = (bench_thumbnail, bench_thumbnail_refresh)

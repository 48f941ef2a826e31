"""Image work through Pillow: header checks before decoding, and renditions.

Pillow is imported inside the functions, so ``django.setup()`` never pays for it (the
battery's ``media`` extra installs it; a missing Pillow raises ``MissingExtraError``).

Decompression bombs: :func:`open_checked` opens an image lazily (Pillow reads only the
header), compares the announced ``width * height`` with ``max_pixels`` and refuses it
before any pixel is decoded. Pillow's own process-wide guard
(``Image.MAX_IMAGE_PIXELS``) is raised to ``max_pixels`` when that is higher, so the
battery's limit is the one in force; Pillow's ``DecompressionBombError`` (which it raises
from the header for images over twice its limit) is mapped to
:class:`~.errors.ImageTooLargeError` as well. Only JPEG, PNG, WEBP and GIF are opened
(``Image.open(formats=...)``), so no other decoder ever sees an upload.
"""

from __future__ import annotations

import io
import math
import threading
from dataclasses import dataclass
from typing import Any

from toolkit_batteries.core.errors import MissingExtraError

from .errors import ImageTooLargeError, MediaError, UnsupportedMediaError

__all__ = [
    "FITS",
    "INPUT_FORMATS",
    "MAX_SIDE",
    "OUTPUT_FORMATS",
    "Geometry",
    "inspect",
    "output_format",
    "render",
]

#: Accepted input formats (Pillow names) and their content types.
INPUT_FORMATS: dict[str, str] = {
    "JPEG": "image/jpeg",
    "PNG": "image/png",
    "WEBP": "image/webp",
    "GIF": "image/gif",
}
#: Output formats by the names callers use: (Pillow name, content type, file extension).
OUTPUT_FORMATS: dict[str, tuple[str, str, str]] = {
    "jpeg": ("JPEG", "image/jpeg", "jpg"),
    "png": ("PNG", "image/png", "png"),
    "webp": ("WEBP", "image/webp", "webp"),
}
#: How a rendition fills its box.
FITS = ("contain", "cover", "fill")
#: The largest side a rendition may have, in pixels.
MAX_SIDE = 10000

_pillow_limit_lock = threading.Lock()


def pil() -> Any:
    """Return ``PIL.Image`` (raises ``MissingExtraError`` naming the ``media`` extra)."""
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - the media extra is part of dev installs
        raise MissingExtraError("media", "images", "media", exc.name or "PIL") from None
    return Image


def allow_pixels(max_pixels: int) -> None:
    """Raise Pillow's process-wide bomb limit to ``max_pixels`` if it is lower.

    The battery checks ``max_pixels`` itself from the header; Pillow's global limit would
    otherwise refuse (or warn about) images the configuration allows.
    """
    image = pil()
    with _pillow_limit_lock:
        current = image.MAX_IMAGE_PIXELS
        if current is not None and max_pixels > current:
            image.MAX_IMAGE_PIXELS = max_pixels


def open_checked(data: bytes | Any, max_pixels: int, *, where: str) -> Any:
    """Open ``data`` (bytes or a binary file) lazily, refuse it from its header alone.

    Raises :class:`ImageTooLargeError` when the header announces more than ``max_pixels``
    pixels, :class:`UnsupportedMediaError` when it is not an accepted image.
    """
    image = pil()
    try:
        source = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
        opened = image.open(source, formats=tuple(INPUT_FORMATS))
    except image.DecompressionBombError:
        raise ImageTooLargeError(f"{where}: the image has more pixels than max_pixels") from None
    except (image.UnidentifiedImageError, OSError, SyntaxError, ValueError):
        raise UnsupportedMediaError(
            f"{where}: the data is not a JPEG, PNG, WEBP or GIF image"
        ) from None
    width, height = opened.size
    if width < 1 or height < 1:
        raise UnsupportedMediaError(f"{where}: the image has no pixels")
    if max_pixels and width * height > max_pixels:
        raise ImageTooLargeError(
            f"{where}: the image has more pixels ({width}x{height}) than max_pixels allows"
        )
    return opened


def inspect(
    data: bytes | Any, max_pixels: int, *, where: str, decode: bool = False
) -> tuple[str, int, int]:
    """Return ``(format, width, height)`` of an accepted image; ``decode`` verifies pixels.

    The header check runs first; with ``decode`` the first frame is then decoded, so a
    truncated or corrupt file is refused before it is stored.
    """
    opened = open_checked(data, max_pixels, where=where)
    try:
        if decode:
            opened.load()
        return str(opened.format), opened.size[0], opened.size[1]
    except (OSError, SyntaxError, ValueError, EOFError):
        raise UnsupportedMediaError(f"{where}: the image data is corrupt or truncated") from None
    finally:
        opened.close()


@dataclass(frozen=True, slots=True)
class Geometry:
    """What a rendition asks for: a box, a fit, an optional crop, a format and quality."""

    width: int | None
    height: int | None
    fit: str
    format: str
    quality: int
    crop: tuple[int, int, int, int] | None

    def spec(self) -> str:
        """Return the part of the derived key that names this rendition."""
        crop = "-c" + "_".join(map(str, self.crop)) if self.crop else ""
        return (
            f"{self.width or 0}x{self.height or 0}-{self.fit}-q{self.quality}{crop}"
            f".{OUTPUT_FORMATS[self.format][2]}"
        )


def output_format(name: str | None, source: str) -> str:
    """Return the output format name: ``name``, else the source's (GIF becomes PNG)."""
    if name is None:
        return {"JPEG": "jpeg", "WEBP": "webp"}.get(source, "png")
    key = str(name).lower()
    key = "jpeg" if key == "jpg" else key
    if key not in OUTPUT_FORMATS:
        raise MediaError(f"media: format is one of {', '.join(OUTPUT_FORMATS)}")
    return key


def check_geometry(
    width: int | None,
    height: int | None,
    fit: str,
    quality: int,
    crop: Any,
    max_pixels: int,
) -> tuple[int | None, int | None, tuple[int, int, int, int] | None]:
    """Check a rendition's arguments; return the normalised ``(width, height, crop)``."""
    if fit not in FITS:
        raise MediaError(f"media: fit is one of {', '.join(FITS)}")
    sides: list[int | None] = []
    for name, value in (("width", width), ("height", height)):
        if value is None:
            sides.append(None)
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIDE:
            raise MediaError(f"media: {name} is a whole number of pixels from 1 to {MAX_SIDE}")
        sides.append(value)
    w, h = sides
    if w is None and h is None:
        raise MediaError("media: a rendition needs a width, a height or both")
    if fit != "contain" and (w is None or h is None):
        raise MediaError(f"media: fit {fit} needs both width and height")
    if w and h and max_pixels and w * h > max_pixels:
        raise ImageTooLargeError("media: the rendition would have more pixels than max_pixels")
    if isinstance(quality, bool) or not isinstance(quality, int) or not 1 <= quality <= 95:
        raise MediaError("media: quality is a whole number from 1 to 95")
    box = None
    if crop is not None:
        try:
            box = tuple(int(v) for v in crop)
        except (TypeError, ValueError):
            box = ()
        if len(box) != 4 or box[0] < 0 or box[1] < 0 or box[2] <= box[0] or box[3] <= box[1]:
            raise MediaError(
                "media: crop is (left, top, right, bottom) with right > left, bottom > top"
            )
    return w, h, box  # type: ignore[return-value]


def _target(size: tuple[int, int], geometry: Geometry) -> tuple[tuple[int, int], tuple[float, ...]]:
    """Return the output size and the source box to resample from."""
    sw, sh = size
    w, h = geometry.width, geometry.height
    if geometry.fit == "fill":
        return (w, h), (0, 0, sw, sh)  # type: ignore[return-value]
    if geometry.fit == "cover":
        assert w and h
        ratio = w / h
        if sw / sh > ratio:  # wider than the box: trim the sides
            cut = sh * ratio
            left = (sw - cut) / 2
            return (w, h), (left, 0, left + cut, sh)
        cut = sw / ratio
        top = (sh - cut) / 2
        return (w, h), (0, top, sw, top + cut)
    # contain: inside the box, aspect kept, never enlarged
    scales = [s for s in ((w / sw) if w else None, (h / sh) if h else None) if s is not None]
    scale = min([1.0, *scales])
    return (max(1, round(sw * scale)), max(1, round(sh * scale))), (0, 0, sw, sh)


def render(
    data: bytes, geometry: Geometry, max_pixels: int, *, where: str
) -> tuple[bytes, int, int]:
    """Return the rendition's bytes and size: header check, crop, resize, encode.

    EXIF orientation is applied and metadata (EXIF, comments) is not copied, so a
    rendition carries no location or camera data.
    """
    image = pil()
    from PIL import ImageOps

    opened = open_checked(data, max_pixels, where=where)
    try:
        source_format = opened.format
        try:
            if geometry.crop is None and source_format == "JPEG" and not _rotated(opened):
                # Let the JPEG decoder scale down by 1/2..1/8 while decoding (as thumbnail does).
                want, _ = _target(opened.size, geometry)
                if geometry.fit == "cover":
                    sw, sh = opened.size
                    scale = max(want[0] / sw, want[1] / sh)
                    want = (math.ceil(sw * scale), math.ceil(sh * scale))
                opened.draft("RGB", want)
            frame = ImageOps.exif_transpose(opened)
            frame.load()
        except (OSError, SyntaxError, ValueError, EOFError):
            raise UnsupportedMediaError(
                f"{where}: the image data is corrupt or truncated"
            ) from None
        if geometry.crop is not None:
            _, _, right, bottom = geometry.crop
            if right > frame.width or bottom > frame.height:
                raise MediaError(f"{where}: crop reaches outside the image")
            frame = frame.crop(geometry.crop)
        out_size, box = _target(frame.size, geometry)
        frame = _mode_for(frame, geometry.format)
        if out_size != frame.size or box != (0, 0, frame.width, frame.height):
            frame = frame.resize(out_size, image.Resampling.LANCZOS, box=box, reducing_gap=3.0)
        buffer = io.BytesIO()
        pillow_name = OUTPUT_FORMATS[geometry.format][0]
        extra: dict[str, Any] = {}
        if pillow_name in ("JPEG", "WEBP"):
            extra["quality"] = geometry.quality
        frame.save(buffer, format=pillow_name, **extra)
        return buffer.getvalue(), frame.width, frame.height
    finally:
        opened.close()


def _rotated(opened: Any) -> bool:
    """Tell whether the EXIF orientation turns the image (draft sizes would then swap)."""
    try:
        return int(opened.getexif().get(0x0112, 1)) not in (1,)
    except Exception:
        return True


def _mode_for(frame: Any, fmt: str) -> Any:
    """Convert ``frame`` to a mode the output format stores (alpha onto white for JPEG)."""
    image = pil()
    if frame.mode == "P":
        frame = frame.convert("RGBA" if "transparency" in frame.info else "RGB")
    if fmt == "jpeg":
        if frame.mode in ("RGBA", "LA", "PA"):
            background = image.new("RGB", frame.size, (255, 255, 255))
            background.paste(frame, mask=frame.getchannel("A"))
            return background
        if frame.mode not in ("RGB", "L"):
            return frame.convert("RGB")
        return frame
    if frame.mode not in ("RGB", "RGBA", "L", "LA"):
        return frame.convert("RGBA" if "A" in frame.mode else "RGB")
    return frame

"""Video work through the ``ffprobe`` and ``ffmpeg`` binaries (Debian's ``ffmpeg`` package).

Each call is one subprocess with an argument list (never a shell), stdin closed, a time
limit (the child is killed when it runs over), and the input named as ``file:<path>`` of
a temporary file the battery wrote, so a key can never be read as an option or a
protocol. The demuxers are limited to ordinary container formats (``-format_whitelist``)
and the protocols to ``file`` (``-protocol_whitelist``), so a crafted playlist (HLS,
concat) cannot make ffmpeg read other local files or reach the network.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from .errors import MediaTimeoutError, MediaToolError, UnsupportedMediaError

__all__ = ["FORMAT_WHITELIST", "VIDEO_FORMATS", "Probe", "extract_frame", "probe", "transcode"]

logger = logging.getLogger("toolkit.media")

#: Demuxers ffmpeg may use on an upload (MP4/QuickTime, Matroska/WebM, AVI, MPEG-TS, Ogg).
FORMAT_WHITELIST = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,mpegts,ogg"
#: Output formats of :func:`transcode`: (ffmpeg arguments, content type, extension).
VIDEO_FORMATS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "mp4": (
        (
            "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", "-f", "mp4",
        ),
        "video/mp4",
        "mp4",
    ),
    "webm": (
        (
            "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M",
            "-c:a", "libvorbis", "-f", "webm",
        ),
        "video/webm",
        "webm",
    ),
}  # fmt: skip
_INPUT = ("-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST)


@dataclass(frozen=True, slots=True)
class Probe:
    """What ffprobe found: seconds, the first video stream's size and codec, the container."""

    duration: float
    width: int
    height: int
    codec: str
    format: str


def _run(args: list[str], *, timeout: float, tool: str, where: str) -> bytes:
    """Run one tool; return its stdout; raise the battery's errors on failure or timeout."""
    binary = args[0]
    if os.sep not in binary and shutil.which(binary) is None:
        raise MediaToolError(f"{where}: the {tool} binary is not installed (option {tool})")
    try:
        done = subprocess.run(
            args,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise MediaTimeoutError(f"{where}: {tool} ran past its {timeout:g}s limit") from None
    except FileNotFoundError:
        raise MediaToolError(
            f"{where}: the {tool} binary is not installed (option {tool})"
        ) from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        logger.debug("%s: %s exited %s: %s", where, tool, done.returncode, detail[-1:] or "")
        raise UnsupportedMediaError(
            f"{where}: {tool} could not read the video (exit {done.returncode})"
        )
    return done.stdout


def probe(ffprobe: str, path: str, *, timeout: float, where: str) -> Probe:
    """Return the :class:`Probe` of the video file at ``path``."""
    out = _run(
        [
            ffprobe, "-v", "error", *_INPUT, "-print_format", "json",
            "-show_format", "-show_streams", f"file:{path}",
        ],
        timeout=timeout,
        tool="ffprobe",
        where=where,
    )  # fmt: skip
    try:
        found: dict[str, Any] = json.loads(out or b"{}")
    except ValueError:
        raise UnsupportedMediaError(f"{where}: ffprobe gave no readable answer") from None
    streams = [s for s in found.get("streams", []) if s.get("codec_type") == "video"]
    streams = [s for s in streams if not (s.get("disposition") or {}).get("attached_pic")]
    if not streams:
        raise UnsupportedMediaError(f"{where}: the file has no video stream")
    stream = streams[0]
    container = found.get("format") or {}
    duration = _seconds(container.get("duration")) or _seconds(stream.get("duration"))
    if duration is None:
        raise UnsupportedMediaError(f"{where}: the video's duration is unknown")
    return Probe(
        duration=duration,
        width=int(stream.get("width") or 0),
        height=int(stream.get("height") or 0),
        codec=str(stream.get("codec_name") or ""),
        format=str(container.get("format_name") or ""),
    )


def _seconds(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _scale(width: int | None, height: int | None) -> list[str]:
    """Return ffmpeg's scale filter for a box (aspect kept, even sides for the codecs)."""
    if width and height:
        return ["-vf", f"scale={width}:{height}:force_original_aspect_ratio=decrease,"
                "scale=trunc(iw/2)*2:trunc(ih/2)*2"]  # fmt: skip
    if width:
        return ["-vf", f"scale={width}:-2"]
    if height:
        return ["-vf", f"scale=-2:{height}"]
    return ["-vf", "scale=trunc(iw/2)*2:trunc(ih/2)*2"]


def extract_frame(
    ffmpeg: str, path: str, out: str, *, at: float, timeout: float, where: str
) -> None:
    """Write the frame at ``at`` seconds of ``path`` to ``out`` as PNG."""
    _run(
        [
            ffmpeg, "-nostdin", "-v", "error", "-y", "-ss", f"{at:.3f}", *_INPUT,
            "-i", f"file:{path}", "-frames:v", "1", "-an", "-f", "image2", "-c:v", "png",
            f"file:{out}",
        ],
        timeout=timeout,
        tool="ffmpeg",
        where=where,
    )  # fmt: skip
    if not os.path.exists(out) or os.path.getsize(out) == 0:
        raise UnsupportedMediaError(f"{where}: the video has no frame at that time")


def transcode(
    ffmpeg: str,
    path: str,
    out: str,
    *,
    fmt: str,
    width: int | None,
    height: int | None,
    max_seconds: float | None,
    timeout: float,
    where: str,
) -> None:
    """Write a rendition of ``path`` to ``out`` (``fmt``: ``mp4`` or ``webm``)."""
    codec_args = VIDEO_FORMATS[fmt][0]
    limit = ["-t", f"{max_seconds:.3f}"] if max_seconds else []
    _run(
        [
            ffmpeg, "-nostdin", "-v", "error", "-y", *_INPUT, "-i", f"file:{path}", *limit,
            *_scale(width, height), *codec_args, f"file:{out}",
        ],
        timeout=timeout,
        tool="ffmpeg",
        where=where,
    )  # fmt: skip

"""PNG output for ``toolkit graph``: the SVG drawing rasterised by ``cairosvg``.

``cairosvg`` (the ``graph`` extra) draws through the system's libcairo; either missing
is reported as one error naming the extra, never a traceback. Cairo refuses surfaces
larger than 32767 pixels a side, so a very tall or wide drawing (a 500-entity chain) is
scaled down to fit, and to at most 100 megapixels.
"""

from __future__ import annotations

import math
import re

from toolkit_batteries.cli.output import CliError

__all__ = ["EXTRA_HINT", "MAX_PIXELS", "MAX_SIDE", "fit_scale", "svg_to_png"]

EXTRA_HINT = "pip install 'django-toolkit[graph]' (cairosvg; needs the system's libcairo)"
MAX_SIDE = 32000
MAX_PIXELS = 100_000_000
_SIZE = re.compile(r'<svg\b[^>]*?\bwidth="([\d.]+)"[^>]*?\bheight="([\d.]+)"')


def fit_scale(width: float, height: float) -> float:
    """Return the largest scale <= 1 that keeps the picture within cairo's limits."""
    if width <= 0 or height <= 0:
        return 1.0
    scale = min(1.0, MAX_SIDE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    return math.floor(scale * 1e6) / 1e6  # round down: never a pixel over the limit


def svg_to_png(svg: str) -> bytes:
    """Return the PNG bytes of an SVG document (scaled down only when it must be)."""
    try:
        import cairosvg
    except (ImportError, OSError) as exc:  # OSError: cairocffi found no libcairo
        detail = (str(exc).splitlines() or [""])[0]
        raise CliError(
            f"--format png needs the optional cairosvg package ({type(exc).__name__}: {detail})",
            hint=EXTRA_HINT,
        ) from None
    match = _SIZE.search(svg)
    scale = fit_scale(float(match.group(1)), float(match.group(2))) if match else 1.0
    try:
        return cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale)
    except Exception as exc:  # cairo's own errors: report one line, not a traceback
        raise CliError(f"cannot render the PNG ({type(exc).__name__}: {exc})") from None

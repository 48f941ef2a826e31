"""The ``static`` adapter: geocoding from a JSON gazetteer file, in process.

The file (option ``path``) is either a list of places or ``{"places": [...]}``; each place
is an object::

    {"address": "Berlin, Germany",          # required, the one-line address
     "lat": 52.52, "lon": 13.405,            # required numbers, in range
     "name": "Berlin",                       # optional
     "aliases": ["Berlin, DE", "BER"],       # optional extra texts that match it
     "country_code": "DE", "kind": "city",   # optional
     "components": {"city": "Berlin"},       # optional, strings to strings
     "id": "berlin",                         # optional provider_id
     "radius_m": 20000}                      # optional reach for reverse (default 1000 m)

**Geocode**: a query matches a place whose ``name``, ``address`` or an alias equals it,
ignoring case and repeated blanks (these come first, in file order), then places whose
``address`` or ``name`` contains it. **Reverse**: the nearest place (great-circle
distance) whose ``radius_m`` reaches the point, else ``None``.

**The path is guarded.** A relative path is taken from the project root
(``settings.BASE_DIR``, else the working directory), and the file, symbolic links
resolved, must lie under that root: ``../`` or an absolute path elsewhere is refused at
open. A file that is not valid JSON, or a place with a missing or wrong field, fails the
open with an error naming the file and the field (``places[2].lat``), never a value.
Without ``path`` the gazetteer is empty (every query answers nothing).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any, Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError

from ..base import Geo, Place

__all__ = ["DEFAULT_RADIUS_M", "MAX_FILE_BYTES", "StaticGeo", "load_places", "project_root"]

#: Reach of a place for ``reverse`` when it sets no ``radius_m`` (metres).
DEFAULT_RADIUS_M = 1000.0
#: Largest gazetteer file read (bytes); a bigger one is a mistake, not a gazetteer.
MAX_FILE_BYTES = 64 * 1024 * 1024
_EARTH_RADIUS_M = 6_371_008.8
_BLANKS = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _BLANKS.sub(" ", text).strip().casefold()


def project_root() -> Path:
    """Return the directory a relative ``path`` is read from (``BASE_DIR`` or the cwd)."""
    from django.conf import settings

    base = getattr(settings, "BASE_DIR", None) if settings.configured else None
    return Path(base or os.getcwd())


def guarded_path(path: str, root: Path, *, instance: str = "default") -> Path:
    """Return ``path`` resolved under ``root``, or raise naming the option, never the path."""
    base = root.resolve()
    target = (base / Path(path).expanduser()).resolve()
    if not target.is_relative_to(base):
        raise InvalidOptionsError(
            "geo",
            "path",
            "resolves outside the project root (BASE_DIR); keep the gazetteer inside it",
            instance=instance,
        )
    return target


class _Invalid(ValueError):
    """A field of the file is wrong; ``where`` is its JSON path (``places[2].lat``)."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")


def _text(entry: dict[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise _Invalid(
            f"{where}.{key}", "must be a non-empty string" if required else "must be a string"
        )
    return value.strip()


def _number(entry: dict[str, Any], key: str, where: str, low: float, high: float) -> float:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid(f"{where}.{key}", "must be a number")
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise _Invalid(f"{where}.{key}", f"must be between {low:g} and {high:g}")
    return number


def _place(entry: Any, where: str) -> tuple[Place, tuple[str, ...], float]:
    if not isinstance(entry, dict):
        raise _Invalid(where, "must be an object")
    address = _text(entry, "address", where, required=True)
    lat = _number(entry, "lat", where, -90.0, 90.0)
    lon = _number(entry, "lon", where, -180.0, 180.0)
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise _Invalid(f"{where}.aliases", "must be a list of strings")
    components = entry.get("components", {})
    if not isinstance(components, dict) or not all(isinstance(v, str) for v in components.values()):
        raise _Invalid(f"{where}.components", "must be an object of strings")
    radius = DEFAULT_RADIUS_M
    if entry.get("radius_m") is not None:
        radius = _number(entry, "radius_m", where, 0.0, 20_037_509.0)
    place = Place(
        lat=lat,
        lon=lon,
        address=address,
        name=_text(entry, "name", where),
        country_code=_text(entry, "country_code", where).upper(),
        kind=_text(entry, "kind", where),
        components=MappingProxyType(dict(components)),
        provider_id=_text(entry, "id", where),
        raw=MappingProxyType(entry),
    )
    return place, tuple(a for a in aliases if a.strip()), radius


def load_places(data: bytes) -> list[tuple[Place, tuple[str, ...], float]]:
    """Parse a gazetteer; raise ``ValueError`` naming the line or the field at fault."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ValueError("is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    if isinstance(document, dict):
        if not isinstance(document.get("places"), list):
            raise _Invalid("places", 'must be a list (the file is a list or {"places": [...]})')
        entries, prefix = document["places"], "places"
    elif isinstance(document, list):
        entries, prefix = document, ""
    else:
        raise ValueError('must hold a list of places or {"places": [...]}')
    return [_place(entry, f"{prefix}[{i}]") for i, entry in enumerate(entries)]


def _distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle (haversine) distance in metres."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * _EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(a)))


class StaticGeo(Geo):
    """A gazetteer read once from a JSON file; nothing leaves the process."""

    adapter_name = "static"

    def __init__(
        self,
        entries: list[tuple[Place, tuple[str, ...], float]] | None = None,
        *,
        instance: str = "default",
    ) -> None:
        super().__init__(instance=instance)
        self._entries = list(entries or ())
        self._exact: dict[str, list[int]] = {}
        #: Per place, its normalized address and name joined by a newline (a normalized
        #: query has none), so one ``in`` test scans both.
        self._texts: list[str] = []
        for index, (place, aliases, _) in enumerate(self._entries):
            texts = {_normal(t) for t in (place.name, place.address, *aliases) if t}
            for text in texts:
                self._exact.setdefault(text, []).append(index)
            self._texts.append("\n".join(_normal(t) for t in (place.address, place.name) if t))

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Read and validate ``path`` (under the project root); an empty gazetteer without."""
        return cls.from_path(ctx.options.path, project_root(), instance=ctx.instance)

    @classmethod
    def from_path(cls, path: str, root: Path, *, instance: str = "default") -> Self:
        """Load the gazetteer at ``path`` under ``root``; raise ``InvalidOptionsError``."""
        if not (path or "").strip():
            return cls(instance=instance)
        target = guarded_path(path.strip(), root, instance=instance)
        label = target.relative_to(root.resolve()).as_posix()

        def invalid(reason: str) -> InvalidOptionsError:
            return InvalidOptionsError("geo", "path", f"file {label} {reason}", instance=instance)

        try:
            with open(target, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            raise invalid("does not exist") from None
        except OSError:
            raise invalid("cannot be read") from None
        if len(data) > MAX_FILE_BYTES:
            raise invalid(f"is larger than {MAX_FILE_BYTES} bytes")
        try:
            entries = load_places(data)
        except _Invalid as exc:
            raise invalid(f"has a bad field: {exc}") from None
        except ValueError as exc:
            raise invalid(str(exc)) from None
        return cls(entries, instance=instance)

    def __len__(self) -> int:
        return len(self._entries)

    def _geocode(self, query: str) -> list[Place]:
        text = _normal(query)
        exact = self._exact.get(text)
        entries = self._entries
        contains = [i for i, haystack in enumerate(self._texts) if text in haystack]
        if not exact:
            return [entries[i][0] for i in contains]
        chosen = set(exact)
        return [entries[i][0] for i in exact] + [entries[i][0] for i in contains if i not in chosen]

    def _reverse(self, lat: float, lon: float) -> Place | None:
        best: Place | None = None
        best_distance = math.inf
        for place, _, radius in self._entries:
            distance = _distance_m(lat, lon, place.lat, place.lon)
            if distance <= radius and distance < best_distance:
                best, best_distance = place, distance
        return best

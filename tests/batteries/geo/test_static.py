"""What only ``static`` has: the guarded path and the file's validation."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.geo.adapters.static import StaticGeo

from .conftest import open_geo
from .servers import PLACES


@pytest.fixture
def root(tmp_path: Path, settings: Any) -> Path:
    base = tmp_path / "project"
    base.mkdir()
    settings.BASE_DIR = base
    return base


def static(path: str) -> Any:
    return open_geo({"adapter": "static", "options": {"path": path}})[0]


def test_a_relative_path_is_read_from_base_dir(root: Path) -> None:
    (root / "data").mkdir()
    (root / "data" / "places.json").write_text(json.dumps(PLACES))  # a bare list works too
    geo = static("data/places.json")
    assert len(geo) == 2
    assert geo.geocode("berlin, GERMANY")[0].name == "Berlin"


@pytest.mark.parametrize("path", ["../outside.json", "data/../../outside.json", "ABSOLUTE"])
def test_paths_outside_the_root_are_refused(root: Path, path: str) -> None:
    outside = root.parent / "outside.json"
    outside.write_text(json.dumps(PLACES))
    if path == "ABSOLUTE":
        path = str(outside)
    with pytest.raises(
        InvalidOptionsError, match='option "path" resolves outside the project root'
    ) as caught:
        static(path)
    assert "outside.json" not in str(caught.value)


def test_an_absolute_path_inside_the_root_is_fine(root: Path) -> None:
    (root / "places.json").write_text(json.dumps(PLACES))
    assert len(static(str(root / "places.json"))) == 2


def test_a_symbolic_link_out_of_the_root_is_refused(root: Path) -> None:
    outside = root.parent / "secret.json"
    outside.write_text(json.dumps(PLACES))
    os.symlink(outside, root / "places.json")
    with pytest.raises(InvalidOptionsError, match="resolves outside the project root"):
        static("places.json")


def test_a_missing_file_is_named(root: Path) -> None:
    with pytest.raises(InvalidOptionsError, match=r'"path" file missing\.json does not exist'):
        static("missing.json")


def test_invalid_json_names_the_file_and_the_line(root: Path) -> None:
    (root / "places.json").write_text('{"places": [\n  {"address": "x",}\n]}')
    with pytest.raises(InvalidOptionsError) as caught:
        static("places.json")
    message = str(caught.value)
    assert message.startswith('geo.default: option "path" file places.json is not valid JSON')
    assert "line 2" in message


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"lat": 1, "lon": 2}, "places[1].address: must be a non-empty string"),
        ({"address": "x", "lat": "52", "lon": 2}, "places[1].lat: must be a number"),
        ({"address": "x", "lat": 95, "lon": 2}, "places[1].lat: must be between -90 and 90"),
        ({"address": "x", "lat": 1, "lon": 200}, "places[1].lon: must be between -180 and 180"),
        ({"address": "x", "lat": 1, "lon": 2, "aliases": "y"}, "places[1].aliases: must be a list"),
        ({"address": "x", "lat": 1, "lon": 2, "components": {"a": 1}}, "places[1].components"),
        ({"address": "x", "lat": 1, "lon": 2, "radius_m": -1}, "places[1].radius_m"),
        ("Berlin", "places[1]: must be an object"),
    ],
)
def test_a_bad_field_is_named(root: Path, entry: Any, field: str) -> None:
    (root / "places.json").write_text(json.dumps({"places": [PLACES[0], entry]}))
    with pytest.raises(InvalidOptionsError) as caught:
        static("places.json")
    assert 'option "path" file places.json has a bad field: ' + field in str(caught.value)


def test_a_document_of_the_wrong_shape_is_refused(root: Path) -> None:
    (root / "places.json").write_text(json.dumps({"cities": []}))
    with pytest.raises(InvalidOptionsError, match=r"places: must be a list"):
        static("places.json")


def test_without_a_path_the_gazetteer_is_empty(root: Path) -> None:
    geo = static("")
    assert len(geo) == 0
    assert geo.geocode("Berlin") == [] and geo.reverse(52.5, 13.4) is None


def test_exact_matches_and_aliases_come_before_substrings(root: Path) -> None:
    places = [
        {"address": "Berlin Street 1, Springfield", "lat": 1, "lon": 1},
        {
            "address": "Berlin, Germany",
            "name": "Berlin",
            "lat": 52.5,
            "lon": 13.4,
            "aliases": ["BER"],
        },
    ]
    (root / "places.json").write_text(json.dumps(places))
    geo = static("places.json")
    assert [p.address for p in geo.geocode("berlin")] == [
        "Berlin, Germany",
        "Berlin Street 1, Springfield",
    ]
    assert [p.address for p in geo.geocode("ber")] == [
        "Berlin, Germany",
        "Berlin Street 1, Springfield",
    ]
    assert geo.geocode("Germany")[0].name == "Berlin"


def test_reverse_picks_the_nearest_place_within_its_radius(root: Path) -> None:
    places = [
        {"address": "A", "lat": 10.0, "lon": 10.0, "radius_m": 50_000},
        {"address": "B", "lat": 10.1, "lon": 10.1},
    ]
    (root / "places.json").write_text(json.dumps(places))
    geo = static("places.json")
    assert geo.reverse(10.1, 10.1005).address == "B"  # about 55 m from B
    assert geo.reverse(10.05, 10.05).address == "A"  # B's 1 km default does not reach
    assert geo.reverse(11.0, 11.0) is None


def test_from_path_takes_an_explicit_root(tmp_path: Path) -> None:
    (tmp_path / "places.json").write_text(json.dumps(PLACES))
    assert len(StaticGeo.from_path("places.json", tmp_path)) == 2
    with pytest.raises(InvalidOptionsError, match="outside the project root"):
        StaticGeo.from_path("../places.json", tmp_path / "sub")

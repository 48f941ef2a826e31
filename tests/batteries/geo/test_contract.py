"""One contract, run on every geo adapter (``static``, ``geo_a``, ``geo_b``)."""

from __future__ import annotations

import math

import pytest

from tests.support.batteries import assert_opened_as
from toolkit_batteries.geo import MAX_QUERY_LENGTH, Geo, Place

from .conftest import Opened


class TestGeoContract:
    def test_is_the_battery_class(self, opened: Opened) -> None:
        assert_opened_as(opened.geo, Geo, opened.variant, opened.container, "geo")

    def test_geocode_finds_a_city(self, opened: Opened) -> None:
        places = opened.geo.geocode("Berlin")
        assert len(places) == 1
        berlin = places[0]
        assert isinstance(berlin, Place)
        assert math.isclose(berlin.lat, 52.5170365, abs_tol=1e-6)
        assert math.isclose(berlin.lon, 13.3888599, abs_tol=1e-6)
        assert berlin.address == "Berlin, Germany"
        assert berlin.name == "Berlin"
        assert berlin.country_code == "DE"
        assert berlin.provider_id
        assert berlin.raw is not None

    def test_geocode_ignores_case_and_blanks(self, opened: Opened) -> None:
        places = opened.geo.geocode("  paris  ")
        assert [p.country_code for p in places] == ["FR"]

    def test_geocode_of_an_unknown_place_is_empty(self, opened: Opened) -> None:
        assert opened.geo.geocode("Atlantis") == []

    def test_reverse_finds_the_place_around_a_point(self, opened: Opened) -> None:
        place = opened.geo.reverse(52.52, 13.40)
        assert place is not None
        assert place.address == "Berlin, Germany"
        assert place.country_code == "DE"

    def test_reverse_in_the_ocean_is_none(self, opened: Opened) -> None:
        assert opened.geo.reverse(0.0, -30.0) is None

    def test_reverse_accepts_the_range_edges(self, opened: Opened) -> None:
        assert opened.geo.reverse(90, 180) is None
        assert opened.geo.reverse(-90, -180) is None

    @pytest.mark.parametrize(
        ("lat", "lon", "error"),
        [
            (90.0001, 0.0, ValueError),
            (-91, 0.0, ValueError),
            (0.0, 180.5, ValueError),
            (0.0, -181, ValueError),
            (math.nan, 0.0, ValueError),
            (0.0, math.inf, ValueError),
            ("52.5", 13.4, TypeError),
            (True, 13.4, TypeError),
            (None, 13.4, TypeError),
        ],
    )
    def test_reverse_refuses_bad_coordinates_before_any_request(
        self, opened: Opened, lat: object, lon: object, error: type[Exception]
    ) -> None:
        with pytest.raises(error):
            opened.geo.reverse(lat, lon)
        if opened.server is not None:
            assert opened.server.seen == []

    @pytest.mark.parametrize(
        ("query", "error"),
        [
            ("", ValueError),
            ("   ", ValueError),
            ("x" * (MAX_QUERY_LENGTH + 1), ValueError),
            (None, TypeError),
            (b"Berlin", TypeError),
        ],
    )
    def test_geocode_refuses_bad_queries_before_any_request(
        self, opened: Opened, query: object, error: type[Exception]
    ) -> None:
        with pytest.raises(error) as caught:
            opened.geo.geocode(query)  # type: ignore[arg-type]
        assert "xxxx" not in str(caught.value)
        if opened.server is not None:
            assert opened.server.seen == []

    def test_places_are_values(self, opened: Opened) -> None:
        first = opened.geo.geocode("Berlin")[0]
        again = opened.geo.geocode("Berlin")[0]
        assert first == again
        assert hash(first) == hash(again)
        with pytest.raises(AttributeError):
            first.lat = 0.0  # type: ignore[misc]

    def test_closing_the_container_closes_the_adapter(self, opened: Opened) -> None:
        opened.container.close()
        with pytest.raises(Exception, match="closed"):
            opened.container.geo()

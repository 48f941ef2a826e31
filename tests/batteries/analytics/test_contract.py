"""One contract, run on every analytics adapter (``log`` and ``analytics_b``)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from toolkit_batteries.analytics import Analytics, AnalyticsPropertiesError

from .conftest import Opened


class TestAnalyticsContract:
    def test_the_service_is_the_battery_class(self, opened: Opened) -> None:
        assert isinstance(opened.analytics, Analytics)
        assert opened.analytics.adapter_name == opened.variant
        assert repr(opened.analytics).startswith("<")

    def test_capture_delivers_name_identity_properties_and_uuid(self, opened: Opened) -> None:
        event_id = opened.analytics.capture(
            "signup", {"plan": "pro", "seats": 3, "trial": False}, distinct_id="user-1"
        )
        (event,) = opened.delivered()
        assert event == {
            "event": "signup",
            "distinct_id": "user-1",
            "properties": {"plan": "pro", "seats": 3, "trial": False},
            "groups": {},
            "uuid": event_id,
        }

    def test_capture_without_identity_uses_the_anonymous_id_option(self, make) -> None:
        opened = make(anonymous_id="visitor")
        opened.analytics.capture("page_view")
        assert [e["distinct_id"] for e in opened.delivered()] == ["visitor"]

    def test_the_default_anonymous_id(self, opened: Opened) -> None:
        opened.analytics.capture("page_view")
        assert [e["distinct_id"] for e in opened.delivered()] == ["anonymous"]

    def test_capture_with_groups(self, opened: Opened) -> None:
        opened.analytics.capture("export", distinct_id="u", groups={"company": "acme"})
        assert opened.delivered()[0]["groups"] == {"company": "acme"}

    def test_identify_delivers_traits(self, opened: Opened) -> None:
        opened.analytics.identify("user-7", {"email_domain": "example.org"})
        (event,) = opened.delivered()
        assert (event["event"], event["distinct_id"]) == ("$identify", "user-7")
        assert event["properties"] == {"email_domain": "example.org"}

    def test_group_uses_the_group_type_option_or_the_argument(self, make) -> None:
        opened = make(group_type="company")
        opened.analytics.group("acme", {"seats": 12}, distinct_id="u1")
        opened.analytics.group("eng", {"size": 4}, group_type="team", distinct_id="u1")
        first, second = opened.delivered()
        assert first["event"] == "$groupidentify"
        assert (first["groups"], first["properties"]) == ({"company": "acme"}, {"seats": 12})
        assert (second["groups"], second["properties"]) == ({"team": "eng"}, {"size": 4})

    def test_the_default_group_type_is_organization(self, opened: Opened) -> None:
        opened.analytics.group("acme")
        assert opened.delivered()[0]["groups"] == {"organization": "acme"}

    def test_max_properties_is_enforced_before_anything_is_queued(self, make) -> None:
        opened = make(max_properties=2)
        with pytest.raises(AnalyticsPropertiesError) as caught:
            opened.analytics.capture("e", {"a": 1, "b": 2, "c": "secret-value"}, distinct_id="u")
        message = str(caught.value)
        assert "analytics.default" in message and "max_properties (2)" in message
        assert "secret-value" not in message
        opened.analytics.capture("e", {"a": 1, "b": 2}, distinct_id="u")  # at the bound: fine
        assert [e["properties"] for e in opened.delivered()] == [{"a": 1, "b": 2}]

    def test_max_properties_bytes_is_enforced(self, make) -> None:
        opened = make(max_properties_bytes=40)
        at_bound = {"k": "x" * 32}  # {"k":"xxx..."} is exactly 40 bytes
        opened.analytics.capture("e", at_bound, distinct_id="u")
        with pytest.raises(AnalyticsPropertiesError) as caught:
            opened.analytics.capture("e", {"k": "x" * 33}, distinct_id="u")
        assert "max_properties_bytes (40)" in str(caught.value)
        assert "xxx" not in str(caught.value)
        with pytest.raises(AnalyticsPropertiesError):  # traits are bounded the same way
            opened.analytics.identify("u", {"k": "é" * 20})  # 20 characters, 40+ bytes
        assert [e["properties"] for e in opened.delivered()] == [at_bound]

    def test_the_default_bound_is_64_kib(self, opened: Opened) -> None:
        with pytest.raises(AnalyticsPropertiesError, match="65536"):
            opened.analytics.capture("e", {"blob": "x" * 65536}, distinct_id="u")
        opened.analytics.capture("e", {"blob": "x" * 65000}, distinct_id="u")
        assert len(opened.delivered()) == 1

    @pytest.mark.parametrize(
        ("call", "field"),
        [
            (lambda a: a.capture("", distinct_id="u"), "event"),
            (lambda a: a.capture("$pageview", distinct_id="u"), "event"),
            (lambda a: a.capture("e" * 201, distinct_id="u"), "event"),
            (lambda a: a.capture("e", distinct_id=""), "distinct_id"),
            (lambda a: a.capture("e", ["not", "a", "mapping"]), "properties"),  # type: ignore[arg-type]
            (lambda a: a.capture("e", {1: "int key"}), "properties"),  # type: ignore[dict-item]
            (lambda a: a.capture("e", {"x": object()}), "properties"),
            (lambda a: a.capture("e", {"x": float("nan")}), "properties"),
            (lambda a: a.capture("e", timestamp=datetime(2026, 1, 1)), "timestamp"),
            (lambda a: a.capture("e", groups={"company": ""}), "groups value"),
            (lambda a: a.identify(""), "distinct_id"),
            (lambda a: a.group(""), "group_key"),
        ],
    )
    def test_bad_calls_raise_a_clear_error_and_queue_nothing(self, opened, call, field) -> None:
        with pytest.raises(AnalyticsPropertiesError) as caught:
            call(opened.analytics)
        assert caught.value.field == field
        assert str(caught.value).startswith(f"analytics.default: {field} ")
        assert opened.delivered() == []

    def test_properties_are_a_snapshot_in_json_types(self, opened: Opened) -> None:
        props = {"when": datetime(2026, 5, 1, 12, tzinfo=UTC), "price": Decimal("9.50"), "n": 1}
        opened.analytics.capture("order", props, distinct_id="u")
        props["n"] = 2  # the caller changes its dict after the call
        (event,) = opened.delivered()
        assert event["properties"] == {
            "when": "2026-05-01T12:00:00+00:00",
            "price": "9.50",
            "n": 1,
        }

    def test_stats_count_what_was_delivered(self, opened: Opened) -> None:
        for n in range(3):
            opened.analytics.capture("e", {"n": n}, distinct_id="u")
        opened.delivered()
        stats = opened.analytics.stats()
        assert (stats["sent"], stats["queued"], stats["dropped"], stats["failed"]) == (3, 0, 0, 0)


@pytest.mark.parametrize("adapter", ["log", "analytics_b"])
@pytest.mark.parametrize("field", ["max_properties", "max_properties_bytes"])
def test_a_negative_bound_fails_the_open(adapter: str, field: str) -> None:
    from toolkit_batteries.core.errors import InvalidOptionsError

    from .conftest import open_analytics

    options = {"api_key": "phc_x", field: -1}
    with pytest.raises(InvalidOptionsError, match=rf'analytics\.default: option "{field}"'):
        open_analytics({"adapter": adapter, "options": options}).analytics()

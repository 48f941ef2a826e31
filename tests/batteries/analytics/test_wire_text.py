"""The per-event fast path of ``analytics_b``: each call is queued as JSON text.

The adapter builds a batch item's JSON text at capture, around the encoding of the
properties that was measured against ``max_properties_bytes``, and a flush joins those
texts. These tests hold that text to the dict shape (``wire_message``) on every branch,
and show that the shortcuts of the checks (the flat-dict copy, the direct C encoder, the
uuid formatting) keep what the slower paths guaranteed.
"""

from __future__ import annotations

import enum
import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from toolkit_batteries.analytics import AnalyticsPropertiesError, Event
from toolkit_batteries.analytics.adapters.posthog import wire_message, wire_text
from toolkit_batteries.analytics.base import encode_json
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .conftest import Opened

STAMP = datetime(2027, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


class Level(enum.IntEnum):
    HIGH = 3


class Key(str):
    """A str subclass as a property name: sent as a plain string."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Refuse repeated names in a JSON object (a provider may take either value)."""
    keys = [key for key, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)


@pytest.mark.parametrize(
    ("kind", "name", "properties", "groups"),
    [
        ("capture", "signup", {"plan": "pro", "seats": 3, "trial": False}, {}),
        ("capture", "signup", {}, {}),
        ("capture", "export", {"n": 1.5}, {"company": "acme", "team": 'q"uote'}),
        ("capture", "export", {}, {"company": "acme"}),
        ("capture", "é\u2028日本", {"text": 'line\nbreak "quoted" é', "none": None}, {}),
        ("capture", "nested", {"list": [1, {"a": "b"}], "dict": {"x": [True]}}, {}),
        ("capture", "own lib", {"$lib": "mine", "keep": 1, "$lib_version": "0"}, {}),
        ("capture", "own groups", {"$groups": {"x": "y"}, "k": 1}, {"company": "acme"}),
        ("capture", "value only", {"note": 'mentions "$lib" in text'}, {}),
        ("identify", "$identify", {"email_domain": "example.org"}, {}),
        ("identify", "$identify", {}, {}),
        ("group", "$groupidentify", {"seats": 12}, {"organization": "ac\\me"}),
    ],
)
def test_the_queued_text_is_the_wire_message(kind, name, properties, groups) -> None:
    event = Event(kind, name, "user-é", properties, STAMP, str(uuid.uuid4()), groups)
    text = wire_text(kind, name, "user-é", encode_json(properties), STAMP, event.uuid, groups)
    decoded = json.loads(text, object_pairs_hook=_unique)
    assert decoded == wire_message(event)
    assert list(decoded["properties"]) == list(wire_message(event)["properties"])  # key order


def test_a_non_ascii_batch_reaches_the_provider_intact(opened: Opened) -> None:
    opened.analytics.capture("reçu", {"ville": "Zürich", "emoji": "🎉"}, distinct_id="日本")
    (event,) = opened.delivered()
    assert (event["event"], event["distinct_id"]) == ("reçu", "日本")
    assert event["properties"] == {"ville": "Zürich", "emoji": "🎉"}


def test_a_lone_surrogate_in_a_name_does_not_fail_the_batch(opened: Opened) -> None:
    opened.analytics.capture("ok", distinct_id="u")
    opened.analytics.capture("bad\ud800", distinct_id="u\udfff", groups={"g\ud800": "k"})
    events = opened.delivered()
    assert [(e["event"], e["distinct_id"]) for e in events] == [
        ("ok", "u"),
        ("bad\ud800", "u\udfff"),
    ]
    assert events[1]["groups"] == {"g\ud800": "k"}


def test_a_flat_dict_is_snapshotted_too(opened: Opened) -> None:
    props: dict[str, Any] = {"n": 1, "s": "a", "f": 0.1, "b": True, "z": None}
    opened.analytics.capture("e", props, distinct_id="u")
    props["n"], props["s"] = 2, "changed"
    props["late"] = "x" * 70000  # over the bound: it must not ride along unmeasured
    assert opened.delivered()[0]["properties"] == {
        "n": 1,
        "s": "a",
        "f": 0.1,
        "b": True,
        "z": None,
    }


def test_subclassed_keys_and_values_arrive_as_plain_json_types(opened: Opened) -> None:
    opened.analytics.capture("e", {Key("level"): Level.HIGH}, distinct_id="u")
    (event,) = opened.delivered()
    assert event["properties"] == {"level": 3}
    ((key, value),) = event["properties"].items()
    assert (type(key), type(value)) == (str, int)


def test_a_circular_value_is_refused_and_the_next_call_is_not_affected(opened) -> None:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    with pytest.raises(AnalyticsPropertiesError, match="not JSON-encodable"):
        opened.analytics.capture("e", {"loop": loop}, distinct_id="u")
    shared = {"a": 1}
    opened.analytics.capture("e", {"one": shared, "two": shared}, distinct_id="u")
    assert opened.delivered()[0]["properties"] == {"one": {"a": 1}, "two": {"a": 1}}


def test_event_ids_are_distinct_rfc_4122_version_4_uuids(opened: Opened) -> None:
    ids = [opened.analytics.capture("e", distinct_id="u") for _ in range(200)]
    parsed = [uuid.UUID(event_id) for event_id in ids]
    assert len(set(ids)) == 200
    assert all(u.version == 4 and u.variant == uuid.RFC_4122 for u in parsed)
    assert [str(u) for u in parsed] == ids  # the canonical lower-case form
    assert [e["uuid"] for e in opened.delivered()] == ids


def test_the_log_adapter_writes_a_hostile_name_as_one_encodable_line(caplog) -> None:
    """A name or id with a line break or a lone surrogate (a request body can carry both)
    neither forges a second log line nor breaks a UTF-8 log file."""
    container = Container(Config.load({"analytics": {"default": {"adapter": "log"}}}, {}))
    try:
        with caplog.at_level("INFO", logger="toolkit.analytics"):
            container.analytics().capture("a\nforged line\ud800", distinct_id="u\r\n\udfff")
    finally:
        container.close()
    (line,) = [r.getMessage() for r in caplog.records if " capture " in r.getMessage()]
    assert "\n" not in line and "\r" not in line
    assert line.encode("utf-8")  # raises on a lone surrogate
    assert "a\\nforged line\\ud800" in line and "u\\r\\n\\udfff" in line

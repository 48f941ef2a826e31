"""The analytics service: product events, identify and group calls.

::

    analytics = services.analytics()
    analytics.capture("signup", {"plan": "pro"}, distinct_id=str(user.pk))
    analytics.identify(str(user.pk), {"email_domain": "example.org"})
    analytics.group("acme", {"seats": 12}, distinct_id=str(user.pk))   # group_type option
    analytics.capture("page_view")          # no distinct_id: the anonymous_id option

Every call is checked here, once for all adapters, **before anything is queued**: the
event name, the identity, and the properties (a mapping with string keys, at most
``max_properties`` of them when that option is above 0, and at most
``max_properties_bytes`` once JSON-encoded). A call that breaks a bound raises
:class:`AnalyticsPropertiesError`, naming the instance and the option, never a value, and
nothing of it is sent. Adapters receive a finished :class:`Event` in :meth:`_emit` (or,
overriding :meth:`_queue`, the checked fields and the properties' measured JSON text).

Why checked up front: a provider that refuses an oversized event does so later, in a
background batch, where the caller can no longer be told; and one oversized event would
make a whole batch fail.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from json.encoder import c_make_encoder, encode_basestring
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError, ToolkitError

__all__ = [
    "MAX_EVENT_NAME",
    "MAX_ID_LENGTH",
    "Analytics",
    "AnalyticsDeliveryError",
    "AnalyticsError",
    "AnalyticsPropertiesError",
    "Event",
]

#: Longest accepted event name, distinct id or group key (characters).
MAX_EVENT_NAME = 200
MAX_ID_LENGTH = 200


class AnalyticsError(ToolkitError):
    """Base of the analytics battery's runtime errors; messages never hold a value."""

    code = "analytics_error"


class AnalyticsPropertiesError(AnalyticsError, ValueError):
    """A call's name, identity or properties break a rule; nothing was queued."""

    code = "invalid_argument"
    template = "analytics.{instance}: {field} {reason}; the event was not queued"


class AnalyticsDeliveryError(AnalyticsError):
    """The provider refused or did not answer a batch (status or error class only)."""

    code = "unavailable"

    def __init__(self, instance: str, reason: str, *, retryable: bool) -> None:
        self.instance = instance
        self.retryable = retryable
        kept = "kept for the next flush" if retryable else "dropped"
        super().__init__(f"analytics.{instance}: delivery failed ({reason}); the batch was {kept}")


@dataclass(frozen=True, slots=True)
class Event:
    """One checked call, as adapters receive it."""

    #: ``capture``, ``identify`` or ``group``.
    kind: str
    #: The event name (``$identify`` / ``$groupidentify`` for identify and group).
    name: str
    distinct_id: str
    #: The caller's properties (capture), traits (identify) or group traits (group).
    properties: dict[str, Any]
    timestamp: datetime
    uuid: str
    #: Group type -> group key the event belongs to (capture), or the group itself (group).
    groups: dict[str, str] = field(default_factory=dict)


#: The fields of one checked call, in :meth:`Analytics._queue`'s order: kind, name,
#: distinct id, the properties' measured JSON text, the flat dict (or ``None``),
#: timestamp, event id, groups. An override takes them as ``*checked: *Checked``.
Checked = tuple[str, str, str, str, dict[str, Any] | None, datetime, str, dict[str, str]]


class Analytics(Service):
    """Track events; adapters implement :meth:`_emit` (and :meth:`flush` if they buffer)."""

    service_name: ClassVar[str] = "analytics"

    instance: str = "default"
    anonymous_id: str = "anonymous"
    group_type: str = "organization"
    max_properties: int = 0
    max_properties_bytes: int = 65536
    #: The clock events are stamped with (tests inject one).
    clock: Callable[[], float] = staticmethod(time.time)  # type: ignore[assignment]

    def configure(self, options: Any, *, instance: str) -> None:
        """Take the options every adapter shares; raise ``InvalidOptionsError`` on bad ones."""
        self.instance = instance
        self.anonymous_id = _option_id(options.anonymous_id, "anonymous_id", instance)
        self.group_type = _option_id(options.group_type, "group_type", instance)
        self.max_properties = int(options.max_properties or 0)
        self.max_properties_bytes = int(options.max_properties_bytes or 0)
        for name in ("max_properties", "max_properties_bytes"):
            if getattr(self, name) < 0:
                raise InvalidOptionsError(
                    "analytics", name, "must not be negative", instance=instance
                )

    # ------------------------------------------------------------------ public API

    def capture(
        self,
        event: str,
        properties: Mapping[str, Any] | None = None,
        *,
        distinct_id: str | None = None,
        groups: Mapping[str, str] | None = None,
        timestamp: datetime | None = None,
    ) -> str:
        """Queue one event; return its uuid. ``groups`` maps group type -> group key."""
        name = self._text(event, "event", MAX_EVENT_NAME)
        if name.startswith("$"):
            raise AnalyticsPropertiesError(
                self.instance, "event", "must not start with $ (reserved for identify and group)"
            )
        checked_groups = (
            {
                self._text(kind, "groups key", MAX_ID_LENGTH): self._text(
                    key, "groups value", MAX_ID_LENGTH
                )
                for kind, key in groups.items()
            }
            if groups
            else {}
        )
        return self._build("capture", name, distinct_id, properties, timestamp, checked_groups)

    def identify(
        self,
        distinct_id: str,
        traits: Mapping[str, Any] | None = None,
        *,
        timestamp: datetime | None = None,
    ) -> str:
        """Attach ``traits`` to the person ``distinct_id``; return the event uuid."""
        self._text(distinct_id, "distinct_id", MAX_ID_LENGTH)
        return self._build("identify", "$identify", distinct_id, traits, timestamp, {})

    def group(
        self,
        group_key: str,
        traits: Mapping[str, Any] | None = None,
        *,
        group_type: str | None = None,
        distinct_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> str:
        """Attach ``traits`` to the group ``group_key`` of ``group_type`` (the option's
        value unless given); return the event uuid."""
        kind = self._text(group_type or self.group_type, "group_type", MAX_ID_LENGTH)
        key = self._text(group_key, "group_key", MAX_ID_LENGTH)
        return self._build("group", "$groupidentify", distinct_id, traits, timestamp, {kind: key})

    def flush(self) -> int:
        """Send what is buffered now; return how many events were sent (0 when unbuffered)."""
        return 0

    def stats(self) -> dict[str, int]:
        """Counters: ``queued`` (buffered now), ``sent``, ``dropped`` (buffer full),
        ``failed`` (refused by the provider)."""
        return {"queued": 0, "sent": 0, "dropped": 0, "failed": 0}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} instance={self.instance!r} adapter={self.adapter_name!r}>"

    # ------------------------------------------------------------------ primitive

    def _emit(self, event: Event) -> None:
        """Deliver or buffer one checked event."""
        raise NotImplementedError

    # ------------------------------------------------------------------ checks

    def _build(
        self,
        kind: str,
        name: str,
        distinct_id: str | None,
        properties: Mapping[str, Any] | None,
        timestamp: datetime | None,
        groups: dict[str, str],
    ) -> str:
        who = self.anonymous_id if distinct_id is None else distinct_id
        who = self._text(who, "distinct_id", MAX_ID_LENGTH)
        encoded, flat = self._properties(properties)
        if timestamp is None:
            stamp = datetime.fromtimestamp(self.clock(), UTC)
        elif isinstance(timestamp, datetime) and timestamp.tzinfo is not None:
            stamp = timestamp
        else:
            raise AnalyticsPropertiesError(self.instance, "timestamp", "must be an aware datetime")
        event_id = _uuid4()
        self._queue(kind, name, who, encoded, flat, stamp, event_id, groups)
        return event_id

    def _queue(
        self,
        kind: str,
        name: str,
        distinct_id: str,
        encoded: str,
        flat: dict[str, Any] | None,
        timestamp: datetime,
        event_id: str,
        groups: dict[str, str],
        /,
    ) -> None:
        """Hand one checked call to the adapter: an :class:`Event` to :meth:`_emit`.

        ``encoded`` is the properties' JSON text, the one measured against
        ``max_properties_bytes``; ``flat`` is the same properties as a dict when they
        were a flat dict of JSON scalars (else ``None``: they are decoded from ``encoded``).
        An adapter that sends JSON may override this to queue ``encoded`` as it is,
        without building the ``Event`` or decoding anything.
        """
        properties = flat if flat is not None else json.loads(encoded)
        self._emit(Event(kind, name, distinct_id, properties, timestamp, event_id, groups))

    def _text(self, value: object, what: str, limit: int) -> str:
        if not isinstance(value, str) or not value.strip():
            raise AnalyticsPropertiesError(self.instance, what, "must be a non-empty string")
        if len(value) > limit:
            raise AnalyticsPropertiesError(
                self.instance, what, f"is longer than {limit} characters"
            )
        return value

    def _properties(
        self, properties: Mapping[str, Any] | None
    ) -> tuple[str, dict[str, Any] | None]:
        """Check ``properties``; return their JSON text and, when flat, a copy of them.

        The text is what was measured and what is queued: a caller mutating its dict
        after the call (or during it, from another thread) cannot change a buffered
        event. The copy is returned only when it equals the text's decoding (a ``dict``
        of ``str`` keys and JSON scalar values), so that adapters wanting a dict skip
        the decoding.
        """
        if properties is None:
            return "{}", {}
        if type(properties) is dict:
            # The common case: one shallow copy first, so that everything below checks
            # the very object that is encoded (dict.copy is atomic under the GIL).
            properties = flat = properties.copy()
        elif isinstance(properties, Mapping):
            flat = None
        else:
            raise AnalyticsPropertiesError(self.instance, "properties", "must be a mapping")
        if self.max_properties and len(properties) > self.max_properties:
            raise AnalyticsPropertiesError(
                self.instance,
                "properties",
                f"has {len(properties)} keys, over max_properties ({self.max_properties})",
            )
        # Exact ``str`` keys are checked in C; a str subclass takes the isinstance path
        # (and is a plain str once decoded).
        if not _STR.issuperset(map(type, properties)):
            flat = None
            if not all(isinstance(key, str) for key in properties):
                raise AnalyticsPropertiesError(self.instance, "properties", "keys must be strings")
        try:
            encoded = encode_json(properties)
        except (TypeError, ValueError) as exc:
            raise AnalyticsPropertiesError(
                self.instance, "properties", f"are not JSON-encodable ({type(exc).__name__})"
            ) from None
        # UTF-8 size without encoding a copy when it is all ASCII (its length, then).
        size = len(encoded) if encoded.isascii() else len(encoded.encode())
        if self.max_properties_bytes and size > self.max_properties_bytes:
            raise AnalyticsPropertiesError(
                self.instance,
                "properties",
                f"encode to {size} bytes, over max_properties_bytes ({self.max_properties_bytes})",
            )
        # Every value immutable and of a JSON type (finite floats: the encoder refused
        # the others): the copy equals the decoding of ``encoded``.
        if flat is not None and not _SCALARS.issuperset(map(type, flat.values())):
            flat = None
        return encoded, flat


def _jsonable(value: object) -> str:
    """Encode the common non-JSON property values the providers accept as strings."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, Decimal)):
        return str(value)
    raise TypeError(type(value).__name__)


#: The fallback encoder (an interpreter without ``_json``).
_ENCODER = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_jsonable
)
_STR = frozenset({str})
_SCALARS = frozenset({str, int, float, bool, type(None)})


def encode_json(value: object) -> str:
    """``_ENCODER.encode(value)`` without its per-call Python layers (half the cost).

    A new C encoder per call, as ``JSONEncoder.iterencode`` builds: its circular-reference
    markers must not be shared between threads nor survive a failed call.
    """
    if c_make_encoder is None:  # pragma: no cover - CPython always has _json
        return _ENCODER.encode(value)
    chunks = c_make_encoder({}, _jsonable, encode_basestring, None, ":", ",", False, False, False)
    return "".join(chunks(value, 0))


def _uuid4() -> str:
    """``str(uuid.uuid4())`` at a third of its cost: the same 16 random bytes from
    ``os.urandom`` with the RFC 4122 version-4 and variant bits, formatted without a
    ``UUID`` object."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40
    raw[8] = raw[8] & 0x3F | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _option_id(value: object, field_name: str, instance: str) -> str:
    text = str(value or "").strip()
    if not text or len(text) > MAX_ID_LENGTH:
        raise InvalidOptionsError(
            "analytics", field_name, f"must be 1 to {MAX_ID_LENGTH} characters", instance=instance
        )
    return text

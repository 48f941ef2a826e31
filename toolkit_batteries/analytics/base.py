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
nothing of it is sent. Adapters receive a finished :class:`Event` in :meth:`_emit`.

Why checked up front: a provider that refuses an oversized event does so later, in a
background batch, where the caller can no longer be told; and one oversized event would
make a whole batch fail.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
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
    params = ("instance", "field", "reason")
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
        checked_groups = {
            self._text(kind, "groups key", MAX_ID_LENGTH): self._text(
                key, "groups value", MAX_ID_LENGTH
            )
            for kind, key in (groups or {}).items()
        }
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
        props = self._properties(properties)
        if timestamp is None:
            stamp = datetime.fromtimestamp(self.clock(), UTC)
        elif isinstance(timestamp, datetime) and timestamp.tzinfo is not None:
            stamp = timestamp
        else:
            raise AnalyticsPropertiesError(self.instance, "timestamp", "must be an aware datetime")
        event_id = str(uuid.uuid4())
        self._emit(Event(kind, name, who, props, stamp, event_id, groups))
        return event_id

    def _text(self, value: object, what: str, limit: int) -> str:
        if not isinstance(value, str) or not value.strip():
            raise AnalyticsPropertiesError(self.instance, what, "must be a non-empty string")
        if len(value) > limit:
            raise AnalyticsPropertiesError(
                self.instance, what, f"is longer than {limit} characters"
            )
        return value

    def _properties(self, properties: Mapping[str, Any] | None) -> dict[str, Any]:
        if properties is None:
            return {}
        # ``type(...) is dict`` first: the common case skips the ABC check.
        if type(properties) is not dict and not isinstance(properties, Mapping):
            raise AnalyticsPropertiesError(self.instance, "properties", "must be a mapping")
        if self.max_properties and len(properties) > self.max_properties:
            raise AnalyticsPropertiesError(
                self.instance,
                "properties",
                f"has {len(properties)} keys, over max_properties ({self.max_properties})",
            )
        if not all(isinstance(key, str) for key in properties):
            raise AnalyticsPropertiesError(self.instance, "properties", "keys must be strings")
        try:
            encoded = _ENCODER.encode(properties)
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
        # A snapshot, in JSON's own types: what was measured is what is sent, and a caller
        # mutating its dict after the call cannot change a buffered event.
        return json.loads(encoded)


def _jsonable(value: object) -> str:
    """Encode the common non-JSON property values the providers accept as strings."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, Decimal)):
        return str(value)
    raise TypeError(type(value).__name__)


#: One encoder for every call (``json.dumps`` with options builds a new one each time).
_ENCODER = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_jsonable
)


def _option_id(value: object, field_name: str, instance: str) -> str:
    text = str(value or "").strip()
    if not text or len(text) > MAX_ID_LENGTH:
        raise InvalidOptionsError(
            "analytics", field_name, f"must be 1 to {MAX_ID_LENGTH} characters", instance=instance
        )
    return text

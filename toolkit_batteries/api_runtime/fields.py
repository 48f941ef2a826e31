"""Serializer fields and validators the schema's types need beyond DRF's own.

Generated serializers (``<app>/generated/serializers.py``) import this module. Each field
carries its drf-spectacular description, so the OpenAPI document the server serves names
and shapes things as the compiled ``openapi.json`` does:

- :class:`Base64Field`: ``bytes`` travel as standard base64 strings (``format: byte``).
- :class:`UUIDStringField`: a ``string`` with ``format: "uuid"`` (checked, kept a string).
- :class:`EnumField`: a named enum is the shared component ``<module>_<Enum>`` (not
  drf-spectacular's ``<Field>Enum``); an inline ``enum(a, b)`` stays inline.
- :class:`GreaterThanValidator` / :class:`LessThanValidator`: ``@validate(gt:, lt:)``, the
  exclusive bounds Django has no validator for.
- :class:`RelatedIdsField`: a ``many_to_many`` answered as the related rows' ids.
- :class:`StringField`, :class:`StrictIntegerField`, :class:`StrictFloatField`,
  :class:`StrictBooleanField`, :class:`StrictUUIDField`, :class:`TimestampField`,
  :class:`DateStringField` (and the email / URL strings): JSON bodies taken exactly as the
  document types them, with no coercion across JSON types (see "strict scalars" below).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from collections.abc import Iterable
from typing import Any, ClassVar

from django.core.validators import BaseValidator
from django.utils.dateparse import parse_datetime
from django.utils.deconstruct import deconstructible
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "JSON_VALUE_SCHEMA",
    "NO_NUL_PATTERN",
    "Base64Field",
    "DateStringField",
    "EmailStringField",
    "EnumField",
    "GreaterThanValidator",
    "LessThanValidator",
    "RelatedIdsField",
    "StrictBooleanField",
    "StrictFloatField",
    "StrictIntegerField",
    "StrictUUIDField",
    "StringField",
    "TimestampField",
    "URLStringField",
    "UUIDStringField",
]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@extend_schema_field(OpenApiTypes.BYTE)
class Base64Field(serializers.Field):
    """Binary data as a base64 string (``bytes`` in the schema, ``BinaryField`` in models)."""

    default_error_messages = {"invalid": "Enter valid base64 data."}

    def to_internal_value(self, data: Any) -> bytes:
        """Decode strict base64 (no stray characters)."""
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            return base64.b64decode(data.encode("ascii"), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            self.fail("invalid")

    def to_representation(self, value: Any) -> str:
        """Encode ``bytes`` or ``memoryview`` (what PostgreSQL returns) as base64."""
        return base64.b64encode(bytes(value)).decode("ascii")


class UUIDStringField(serializers.UUIDField):
    """A ``string`` with ``@validate(format: "uuid")``: checked as a UUID, kept a string."""

    def run_validation(self, data: Any = serializers.empty) -> Any:
        """Refuse non-canonical forms (see :class:`StrictUUIDField`)."""
        if data not in (serializers.empty, None) and (
            not isinstance(data, str) or not _CANONICAL_UUID.fullmatch(data)
        ):
            self.fail("invalid", value="")
        return super().run_validation(data)

    def to_internal_value(self, data: Any) -> str:
        """Return the canonical text of the UUID."""
        return str(super().to_internal_value(data))


class EnumField(serializers.ChoiceField):
    """One of an enum's values; ``component`` names a named enum's shared schema."""

    def __init__(self, values: Iterable[str], *, component: str | None = None, **kwargs: Any):
        self.values = tuple(values)
        self.component = component
        super().__init__(choices=[(v, v) for v in self.values], **kwargs)


class EnumFieldExtension(OpenApiSerializerFieldExtension):
    """Describe :class:`EnumField` as the compiled document does.

    A named enum becomes (and references) the component ``<module>_<Enum>``. An inline
    enum is wrapped in a one-branch ``oneOf`` so drf-spectacular's enum post-processing,
    which lifts every inline enum into a ``<Field>Enum`` component, leaves it inline (a
    lone ``allOf`` would be unwrapped first).
    """

    target_class = EnumField

    def get_name(self) -> str | None:
        """Return the component name of a named enum (None keeps it inline)."""
        return self.target.component

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        """Return the enum's schema."""
        del auto_schema, direction
        schema = {"type": "string", "enum": list(self.target.values)}
        return schema if self.target.component else {"oneOf": [schema]}


@deconstructible
class GreaterThanValidator(BaseValidator):
    """Reject values not greater than ``limit_value`` (``@validate(gt: N)``)."""

    message = "Ensure this value is greater than %(limit_value)s."
    code = "min_value"

    def compare(self, a: Any, b: Any) -> bool:
        """Return True (invalid) when ``a <= b``."""
        return a <= b


@deconstructible
class LessThanValidator(BaseValidator):
    """Reject values not less than ``limit_value`` (``@validate(lt: N)``)."""

    message = "Ensure this value is less than %(limit_value)s."
    code = "max_value"

    def compare(self, a: Any, b: Any) -> bool:
        """Return True (invalid) when ``a >= b``."""
        return a >= b


class RelatedIdsField(serializers.ListField):
    """A ``many_to_many`` in a response: the ids of the related rows the caller may read.

    Read-only: rpcs set the relation through a ``[id]`` parameter of the same name
    (:mod:`toolkit_batteries.api_runtime.crud` checks that every id exists and is
    readable). In key order, and only the rows the caller's ``GET`` would read
    (:mod:`.relations`): a generated view loads them for a whole page at once. Its OpenAPI
    schema is the list's (an array of the key's type), as the compiled document says.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def get_attribute(self, instance: Any) -> list[Any]:
        """Return the readable related ids (empty for an unsaved row)."""
        if getattr(instance, "pk", None) is None:
            return []
        from .relations import related_ids

        return related_ids(instance, self.source)


# -- strict scalars ------------------------------------------------------------------------
# DRF coerces across JSON types (``CharField`` turns 0 into "0", ``IntegerField`` takes
# "12", ``BooleanField`` takes "yes", ``UUIDField`` takes an integer). A generated API
# accepts exactly what its OpenAPI document allows, so JSON bodies use these instead; query
# and path parameters, which are always text, keep DRF's parsing of numbers and booleans.

#: What every ``string`` refuses (DRF's ``ProhibitNullCharactersValidator``; PostgreSQL
#: text cannot hold NUL), stated in the document as a pattern (ECMA and Python syntax).
NO_NUL_PATTERN = "^[^\\u0000]*$"
#: A ``json`` value that may not be null (OpenAPI 3.0's ``{}`` would allow null).
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "object"},
        {"type": "array", "items": {}},
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
    ]
}
_CANONICAL_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_NOT_A_STRING = "Not a valid string."


class _StrictText:
    """Refuse anything but a JSON string; the document states NUL is refused."""

    openapi_extra: ClassVar[dict[str, Any]] = {"pattern": NO_NUL_PATTERN}

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            raise serializers.ValidationError(_NOT_A_STRING, code="invalid")
        return super().to_internal_value(data)  # type: ignore[misc]


class StringField(_StrictText, serializers.CharField):
    """A ``string``: a JSON string only (never a number turned into text), no NUL."""


class EmailStringField(_StrictText, serializers.EmailField):
    """A ``string`` with ``@validate(format: "email")``: a JSON string only."""


class URLStringField(_StrictText, serializers.URLField):
    """A ``string`` with ``@validate(format: "url")``: a JSON string only."""


class StrictIntegerField(serializers.IntegerField):
    """An ``int32`` / ``int64`` in a JSON body: a JSON integer (``2.0`` is one), never text."""

    def to_internal_value(self, data: Any) -> int:
        """Refuse booleans, strings and fractions before DRF's checks."""
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not data.is_integer():
            self.fail("invalid")
        return super().to_internal_value(int(data) if isinstance(data, float) else data)


class StrictFloatField(serializers.FloatField):
    """A ``float32`` / ``float64`` in a JSON body: a JSON number, never text."""

    def to_internal_value(self, data: Any) -> float:
        """Refuse booleans and strings before DRF's checks."""
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A ``bool`` in a JSON body: ``true`` or ``false`` only (not "yes", 1 or "true")."""

    def to_internal_value(self, data: Any) -> bool:
        """Return the boolean; anything else is invalid."""
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictUUIDField(serializers.UUIDField):
    """A ``uuid``: the hyphenated text form only (not an integer, hex or ``urn:uuid:``)."""

    def to_internal_value(self, data: Any) -> Any:
        """Refuse non-canonical forms before DRF parses the UUID."""
        if not isinstance(data, str) or not _CANONICAL_UUID.fullmatch(data):
            self.fail("invalid", value="")
        return super().to_internal_value(data)


class TimestampField(serializers.DateTimeField):
    """A ``timestamp``: RFC 3339 both ways (``format: date-time``).

    In, the offset is required (a naive time would be read in the server's zone, which the
    client never sees). Out, the time is in UTC: a server zone's historical offset can
    carry seconds (``-05:50:36``), which RFC 3339 cannot write.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("default_timezone", datetime.UTC)
        super().__init__(**kwargs)

    def to_internal_value(self, value: Any) -> datetime.datetime:
        """Refuse anything but text with an offset, then parse as DRF does."""
        if not isinstance(value, str):
            self.fail("invalid", format="RFC 3339")
        try:  # well-formed but impossible (``12:99``) raises instead of returning None
            parsed = parse_datetime(value) if _RFC3339.fullmatch(value) else None
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            self.fail("invalid", format="YYYY-MM-DDThh:mm:ss[.ffffff]Z or ±hh:mm")
        return super().to_internal_value(value)


#: RFC 3339 ``date-time``: ``T``, seconds, optional fraction, ``Z`` or a numeric offset.
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


class DateStringField(serializers.DateField):
    """A ``date``: RFC 3339 ``full-date`` text only (not ``20000101`` or ``2000-W01-1``)."""

    def to_internal_value(self, value: Any) -> datetime.date:
        """Refuse anything but ``YYYY-MM-DD`` text, then parse as DRF does."""
        if not isinstance(value, str) or not _FULL_DATE.fullmatch(value):
            self.fail("invalid", format="YYYY-MM-DD")
        return super().to_internal_value(value)


_FULL_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)

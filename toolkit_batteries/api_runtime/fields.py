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
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any

from django.core.validators import BaseValidator
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
    "Base64Field",
    "EnumField",
    "GreaterThanValidator",
    "LessThanValidator",
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

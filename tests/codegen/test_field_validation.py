"""Generated request validation answers as DRF does, with fewer Python calls per request.

``toolkit_batteries.api_runtime.field_validation.field_check`` replaces ``Field.run_validation`` on
the generated API's request path. It must accept what DRF accepts with the same value,
and refuse what DRF refuses with the same error detail (message and code): both are run
on the same inputs here, hand-picked edge cases (blank, whitespace, NUL, surrogates,
lengths at and past each bound, wrong JSON types, null, absent) and random text. The last
test pins what the fast path is for: validating a generated body costs a handful of
Python calls, not DRF's dozen per member.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import RegexValidator
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import SkipField, empty, get_error_detail

from toolkit_batteries.api_runtime import fields
from toolkit_batteries.api_runtime.codec import _Codec
from toolkit_batteries.api_runtime.field_validation import field_check


class _Upper(serializers.CharField):
    """A subclass converting text its own way: it keeps DRF's path."""

    def to_internal_value(self, data: Any) -> str:
        return str(data).upper()


class _Contextual:
    """A validator that needs the field (``requires_context``): it keeps DRF's path."""

    requires_context = True

    def __call__(self, value: Any, field: Any) -> None:
        if value == "no":
            raise serializers.ValidationError("refused by context")


def _fields() -> dict[str, Callable[[], serializers.Field]]:
    return {
        "string": lambda: fields.StringField(min_length=1, max_length=5, trim_whitespace=False),
        "string_trimmed": lambda: fields.StringField(max_length=5),
        "string_min3": lambda: fields.StringField(min_length=3, trim_whitespace=False),
        "string_optional_null": lambda: fields.StringField(
            required=False, allow_null=True, trim_whitespace=False
        ),
        "string_blank_ok": lambda: fields.StringField(allow_blank=True, trim_whitespace=False),
        "email": lambda: fields.EmailStringField(max_length=30, trim_whitespace=False),
        "url": lambda: fields.URLStringField(trim_whitespace=False),
        "drf_char": lambda: serializers.CharField(max_length=4),
        "pattern": lambda: fields.StringField(
            trim_whitespace=False, validators=[RegexValidator(r"^[a-z]+$")]
        ),
        "contextual": lambda: fields.StringField(validators=[_Contextual()]),
        "upper": lambda: _Upper(max_length=3),
        "int_bounds": lambda: fields.StrictIntegerField(min_value=-2, max_value=10),
        "int_exclusive": lambda: fields.StrictIntegerField(
            validators=[fields.GreaterThanValidator(0), fields.LessThanValidator(10)]
        ),
        "float": lambda: fields.StrictFloatField(min_value=0.5),
        "bool": lambda: fields.StrictBooleanField(),
        "uuid": lambda: fields.StrictUUIDField(),
        "timestamp": lambda: fields.TimestampField(),
        "enum": lambda: fields.EnumField(["a", "b"]),
    }


EDGES: list[Any] = [
    empty,
    None,
    "",
    " ",
    "  ab  ",
    "a",
    "ab",
    "abc",
    "abcde",
    "abcdef",
    "a\x00b",
    "a\ud800b",
    "\udfff",
    "héllo",
    "ünï",
    "x@example.com",
    "not an email",
    "a" * 25 + "@example.com",
    "https://example.com/x",
    "no",
    "yes",
    0,
    1,
    -2,
    -3,
    10,
    11,
    2.0,
    2.5,
    0.4,
    float("nan"),
    True,
    False,
    [],
    {},
    ["a"],
    "0b3d6a5e-5b0c-4c7e-9f3a-2f1d8c7e6a5b",
    "0B3D6A5E-5B0C-4C7E-9F3A-2F1D8C7E6A5B",
    "0b3d6a5e5b0c4c7e9f3a2f1d8c7e6a5b",
    "2024-01-01T12:00:00Z",
    "2024-01-01T12:00:00",
    "2024-01-01T12:99:00Z",
    "a",
    "b",
    "c",
]


def _outcome(run: Callable[[Any], Any], value: Any) -> tuple[str, Any]:
    """Return what validating ``value`` gives: the value, or the error detail and codes."""
    try:
        got = run(value)
    except ValidationError as exc:
        return "error", (exc.detail, exc.get_codes())
    except DjangoValidationError as exc:
        detail = get_error_detail(exc)
        return "error", (detail, [getattr(d, "code", None) for d in detail])
    except SkipField:
        return "skip", None
    return "value", (type(got), got if got == got else "nan")


@pytest.mark.parametrize("name", sorted(_fields()))
def test_every_edge_case_answers_as_drf_does(name: str) -> None:
    make = _fields()[name]
    fast_field, drf_field = make(), make()
    fast_field.bind(name, serializers.Serializer())
    drf_field.bind(name, serializers.Serializer())
    check = field_check(fast_field)
    for value in EDGES:
        assert _outcome(check, value) == _outcome(drf_field.run_validation, value), (name, value)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=8))
def test_random_text_answers_as_drf_does(text: str) -> None:
    for name in ("string", "string_trimmed", "string_min3", "email", "pattern", "drf_char"):
        make = _fields()[name]
        fast_field, drf_field = make(), make()
        fast_field.bind(name, serializers.Serializer())
        drf_field.bind(name, serializers.Serializer())
        assert _outcome(field_check(fast_field), text) == _outcome(drf_field.run_validation, text)


class _CreateUser(serializers.Serializer):
    email = fields.EmailStringField(max_length=255, trim_whitespace=False)
    name = fields.StringField(min_length=1, max_length=100, trim_whitespace=False)


def test_a_generated_body_costs_a_few_calls_and_names_the_bad_field() -> None:
    codec = _Codec(_CreateUser)
    body = {"email": "new@example.com", "name": "New"}
    codec.validate(body)  # Django compiles the email validator's patterns on first use
    calls: list[str] = []

    def count(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    collecting = gc.isenabled()
    gc.disable()  # a collection would run gc.callbacks in the middle
    sys.setprofile(count)
    try:
        validated = codec.validate(body)
    finally:
        sys.setprofile(None)
        if collecting:
            gc.enable()
    assert validated == body
    # The codec, one check per member and the email validator (its patterns are lazy
    # objects: a few calls each); DRF's run_validation took 41 calls for the same body.
    assert len(calls) <= 12, calls
    with pytest.raises(ValidationError) as refused:
        codec.validate({"email": "new@example.com", "name": "x" * 101})
    assert list(refused.value.detail) == ["name"]
    assert refused.value.get_codes() == {"name": ["max_length"]}

"""Request parsing and response rendering of generated actions, and signed cursors.

A :class:`_Codec` is one serializer instance plus the fast paths that make validating a
request and serialising a result cost what a hand-written view costs (built once per
serializer class); :func:`_json_response` writes what DRF's ``JSONRenderer`` would, with
the C JSON encoder called directly (:func:`_encode`).
Pagination cursors leave signed (:func:`sign_cursor`) and come back checked
(:func:`unsign_cursor`: a 400 on ``cursor`` when altered).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring
from operator import attrgetter
from typing import Any

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Model
from django.http import HttpResponse
from django.utils import timezone
from rest_framework.exceptions import ValidationError
from rest_framework.fields import (
    BooleanField,
    CharField,
    DateTimeField,
    Field,
    SkipField,
    UUIDField,
    empty,
    get_error_detail,
)
from rest_framework.serializers import BaseSerializer, Serializer
from rest_framework.settings import ISO_8601, api_settings

from toolkit_batteries.http import ApiError

from .field_validation import field_check
from .fields import RelatedIdsField, TimestampField

JSON_MEDIA = "application/json"


#: Separates a cursor from its signature: outside the URL-safe base64 alphabet, and left
#: as is in a query string.
_CURSOR_SEP = "."
#: Keeps cursor signatures apart from every other use of SECRET_KEY.
_CURSOR_SALT = "toolkit.codegen.cursor"


def _cursor_signer() -> signing.Signer:
    # SECRET_KEY_FALLBACKS verify too, so rotating the key keeps cursors in flight valid.
    return signing.Signer(sep=_CURSOR_SEP, salt=_CURSOR_SALT)


def _no_body(request: Any) -> bool:
    """Return True when the request carries no body (no length, not chunked)."""
    meta = request.META
    return meta.get("CONTENT_LENGTH") in (None, "", "0") and "HTTP_TRANSFER_ENCODING" not in meta


def sign_cursor(cursor: str) -> str:
    """Return ``cursor`` with its signature, as clients receive it.

    A cursor is the handler's position in a list (often the last row's sort key): signed,
    a client can hand it back but not point it elsewhere, so a handler may trust what it
    decodes from one.
    """
    return _cursor_signer().sign(cursor)


def unsign_cursor(signed: str) -> str:
    """Return the cursor the handler wrote; an altered or forged one is a 400 on ``cursor``."""
    try:
        return _cursor_signer().unsign(signed)
    except signing.BadSignature:
        raise ApiError(
            400, "invalid_argument", "invalid parameter cursor", {"cursor": ["invalid"]}
        ) from None


def _json_response(data: Any) -> HttpResponse:
    """Return ``data`` (a serializer's primitives) as a 200 JSON response.

    What DRF's ``JSONRenderer`` would write (compact, UTF-8, no NaN), without the template
    response machinery a successful generated call does not need.
    """
    return HttpResponse(_encode(data).encode(), content_type=JSON_MEDIA)


#: The fallback encoder (an interpreter without ``_json``), and the refusal of a value that
#: is not JSON (what ``JSONEncoder.default`` raises).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _encode(data: Any) -> str:
    """Return ``_ENCODER.encode(data)``, written by the C encoder without its Python layers.

    ``JSONEncoder.encode`` and ``iterencode`` run some ninety bytecodes of Python per call
    before they reach the C encoder they build; built here directly, with the same
    options, it writes the same text. A new one
    per call, as ``iterencode`` builds: its circular-reference markers must not be shared
    between threads nor survive a failed call.
    """
    if c_make_encoder is None:  # pragma: no cover - CPython always has _json
        return _ENCODER.encode(data)
    chunks = c_make_encoder(
        {}, _ENCODER.default, encode_basestring, None, ":", ",", False, False, False
    )
    return "".join(chunks(data, 0))


class _Codec:
    """One serializer instance and what it takes to use it fast (built once per class).

    - :meth:`validate` is ``run_validation``; for a plain ``Serializer`` without
      serializer-level validators, ``validate()`` or read-only defaults (every generated
      request and parameter serializer), it is ``to_internal_value`` itself, which raises
      the same error details.
    - :meth:`represent` is ``to_representation``; for a model instance whose fields all
      read one attribute (every generated entity serializer) it reads them directly,
      converting text and UUIDs with ``str`` as DRF does, and each other value with its
      field's own ``to_representation``.
    """

    __slots__ = (
        "converts",
        "direct",
        "inputs",
        "names",
        "plan",
        "read",
        "reads_relations",
        "related",
        "required",
        "serializer",
        "shown",
        "whole",
    )

    def __init__(self, serializer_class: type[BaseSerializer]) -> None:
        instance: Any = serializer_class()
        fields = instance.fields
        self.serializer = instance
        self.names = tuple(fields)
        #: Whether a member is required (else a missing body is ``{}``).
        self.required = any(field.required for field in fields.values())
        #: The many_to_many relations the serializer answers as id lists.
        self.related = tuple(f.source for f in fields.values() if isinstance(f, RelatedIdsField))
        #: Whether answering reads relation ids anywhere (then per caller: ``reading``).
        self.reads_relations = _reads_relations(instance)
        self.direct = (
            isinstance(instance, Serializer)
            and type(instance).validate is Serializer.validate
            and type(instance).run_validation is Serializer.run_validation
            and not instance.validators
            and not any(f.read_only for f in fields.values())
        )
        # What ``Serializer.to_internal_value`` does per field on a dict: get the value,
        # run the field's validation, keep it under its source attribute.
        inputs: list[tuple[str, Callable[[Any], Any], Any]] = []
        for field in instance._writable_fields:
            simple = type(field).get_value is Field.get_value and field.source_attrs == [
                field.field_name
            ]
            if not simple or hasattr(instance, f"validate_{field.field_name}"):
                self.direct = False
                break
            inputs.append((field.field_name, field_check(field), field.source_attrs[0]))
        self.inputs = inputs if self.direct else None
        #: Whether valid input sets every member (then :meth:`validate` returns it as is).
        self.whole = self.inputs is not None and {i[2] for i in inputs} == set(self.names)
        plan: list[tuple[str, str, Callable[[Any], Any]]] = []
        readable = True
        for field in instance._readable_fields:
            attrs = field.source_attrs
            if (
                len(attrs) != 1
                or not isinstance(instance, Serializer)
                or type(field).get_attribute is not Field.get_attribute  # a relation's ids
            ):
                readable = False
                break
            kind = type(field).to_representation
            if kind is CharField.to_representation or (
                kind is UUIDField.to_representation and field.uuid_format == "hex_verbose"
            ):
                convert: Callable[[Any], Any] = str
            elif kind is BooleanField.to_representation:
                convert = _boolean(field.to_representation)
            elif (
                kind is DateTimeField.to_representation
                and getattr(field, "format", empty) in (empty, ISO_8601)
                and api_settings.DATETIME_FORMAT == ISO_8601
                and not hasattr(field, "timezone")
            ):
                convert = _iso_datetime
            elif (
                isinstance(field, TimestampField)
                and kind is DateTimeField.to_representation
                and getattr(field, "format", empty) in (empty, ISO_8601)
                and api_settings.DATETIME_FORMAT == ISO_8601
            ):
                convert = _utc_datetime
            else:
                convert = field.to_representation
            plan.append((field.field_name, attrs[0], convert))
        self.plan = plan if readable else None
        #: The plan's attributes, read in one call (a tuple), its names and conversions.
        self.read = _reader(tuple(attr for _, attr, _ in plan)) if readable else None
        self.shown = tuple(name for name, _, _ in plan)
        self.converts = tuple(convert for _, _, convert in plan)

    def validate(self, data: Any) -> dict[str, Any]:
        inputs = self.inputs
        if inputs is None or type(data) is not dict:
            if self.direct and type(data) is dict:
                values = self.serializer.to_internal_value(data)
            else:
                values = self.serializer.run_validation(data)
            return {name: values.get(name) for name in self.names}
        out: dict[str, Any] = {}
        errors: dict[str, Any] = {}
        for name, run_validation, attr in inputs:
            try:
                out[attr] = run_validation(data.get(name, empty))
            except ValidationError as exc:
                errors[name] = exc.detail
            except DjangoValidationError as exc:
                errors[name] = get_error_detail(exc)
            except SkipField:
                out[attr] = None
        if errors:
            raise ValidationError(errors)
        return out if self.whole else {n: out.get(n) for n in self.names}

    def represent(self, obj: Any) -> Any:
        read = self.read
        if read is None or not isinstance(obj, Model):
            return self.serializer.to_representation(obj)
        out = {}
        try:
            for name, convert, value in zip(self.shown, self.converts, read(obj), strict=True):
                out[name] = None if value is None else convert(value)
        except AttributeError:
            return self.serializer.to_representation(obj)
        return out


def _reader(attrs: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """Return a function reading ``attrs`` of an object as a tuple, in one C call.

    ``attrgetter`` returns a tuple for two attributes or more, the value itself for one.
    """
    if len(attrs) > 1:
        return attrgetter(*attrs)
    if attrs:
        one = attrgetter(attrs[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _reads_relations(serializer: Any) -> bool:
    """Return True when ``serializer`` has a :class:`RelatedIdsField` at any depth."""
    pending, seen = [serializer], set()
    while pending:
        field = pending.pop()
        if isinstance(field, RelatedIdsField):
            return True
        if id(field) in seen:
            continue
        seen.add(id(field))
        if isinstance(field, Serializer):
            pending.extend(field.fields.values())
        child = getattr(field, "child", None)
        if isinstance(child, Field):
            pending.append(child)
    return False


def _iso_datetime(value: Any) -> Any:
    """Return what DRF's ``DateTimeField().to_representation`` returns, ISO 8601 output.

    DRF converts an aware value to the current time zone (naive values are made aware
    in it) and writes UTC as ``Z``; the same steps, without the per-call settings lookup.
    """
    if type(value) is not datetime.datetime or value.utcoffset() is None or not settings.USE_TZ:
        return DateTimeField().to_representation(value)  # the rare cases, as DRF does them
    zone = timezone.get_current_timezone()
    if value.tzinfo is not datetime.UTC or getattr(zone, "key", None) != "UTC":
        value = value.astimezone(zone)  # a UTC value in UTC needs no conversion
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _boolean(slow: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Return DRF's ``BooleanField.to_representation`` with a bool answered as itself.

    Why: DRF looks a value up in its true, false and null sets under
    ``contextlib.suppress`` (a few microseconds a field, per row of a page); a model's
    boolean is already the answer. Anything else goes to DRF's own method.
    """

    def convert(value: Any) -> Any:
        return value if type(value) is bool else slow(value)

    return convert


def _utc_datetime(value: Any) -> Any:
    """Return what :class:`~.fields.TimestampField` writes: the time in UTC, ``Z``."""
    if type(value) is not _DATETIME or value.tzinfo is not _UTC:
        if type(value) is not _DATETIME or value.utcoffset() is None:
            return TimestampField().to_representation(value)  # the rare cases, as DRF does
        value = value.astimezone(_UTC)
    # A UTC time's ISO form ends "+00:00": "Z" instead.
    return value.isoformat()[:-6] + "Z"


_DATETIME = datetime.datetime
_UTC = datetime.UTC


def _codec(serializer: type[BaseSerializer]) -> _Codec:
    try:
        return _CODECS[serializer]
    except KeyError:
        return _CODECS.setdefault(serializer, _Codec(serializer))


_CODECS: dict[type[BaseSerializer], _Codec] = {}

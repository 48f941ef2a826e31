"""Serializer fields for schema types, shared by the ``serializers`` and ``views`` backends.

The mapping (docs/compiler.md), strict so a request is taken exactly when the OpenAPI
document allows it (no coercion across JSON types): ``uuid`` ``fields.StrictUUIDField``;
``string`` ``fields.StringField`` (no whitespace trimming; blank allowed unless
``min_len`` says otherwise; NUL refused), ``fields.EmailStringField`` /
``fields.URLStringField`` / ``fields.UUIDStringField`` for ``format``; ``bool``
``fields.StrictBooleanField``; ``bytes`` ``fields.Base64Field``; ``json`` ``JSONField``;
``int32`` / ``int64`` ``fields.StrictIntegerField`` bounded to the column's range;
``float32`` / ``float64`` ``fields.StrictFloatField``; ``timestamp``
``fields.TimestampField`` (RFC 3339, answered in UTC); ``date`` ``fields.DateStringField``;
enums ``fields.EnumField``; an entity or message its serializer. Path and query
parameters (text) use DRF's ``IntegerField`` / ``FloatField`` / ``BooleanField``.
``@validate`` bounds become ``min_length`` / ``max_length`` / ``min_value`` /
``max_value`` (exclusive bounds on integers are turned into inclusive ones; on floats
they are validators). ``?`` is ``required=False,
allow_null=True``; ``@default(x)`` is ``default=x``; ``@default(now())`` is
``required=False`` (the model fills it in).
"""

from __future__ import annotations

import math
from typing import Any

from ..nodes import Default, Schema, TypeRef, Validation, snake_case
from ..pysource import Call, Expr, List, Raw
from ._django_common import component_name

__all__ = ["enum_constant", "serializer_class", "serializer_field"]

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_SIMPLE = {
    "uuid": "fields.StrictUUIDField",
    "bytes": "fields.Base64Field",
    "json": "serializers.JSONField",
    "timestamp": "fields.TimestampField",
    "date": "fields.DateStringField",
}


def serializer_class(name: str) -> str:
    """Return the serializer class of an entity or message (``User`` -> ``UserSerializer``)."""
    return f"{name}Serializer"


def enum_constant(name: str) -> str:
    """Return the constant holding a named enum's values (``OrderStatus`` -> ``ORDER_STATUS``)."""
    return snake_case(name).upper()


def serializer_field(
    schema: Schema,
    typ: TypeRef,
    rules: Validation | None,
    default: Default | None = None,
    *,
    text_input: bool = False,
) -> Expr:
    """Return the DRF field expression for a field or parameter.

    JSON values are taken strictly (no number-to-string or string-to-number coercion:
    ``fields.StrictIntegerField`` and friends); ``text_input`` (a path or query
    parameter, always text) parses numbers and booleans from text with DRF's own fields.

    A list ``[T]`` is ``serializers.ListField(child=<T's field>)``: every element is
    validated by the element's field (``@validate`` rules apply to each element).
    """
    if typ.is_list:
        child = serializer_field(schema, typ.element, rules, text_input=text_input)
        list_kwargs: list[tuple[str, Any]] = [("child", child)]
        if typ.optional:
            list_kwargs += [("required", False), ("allow_null", True)]
        return Call("serializers.ListField", [], list_kwargs)
    kwargs: list[tuple[str, Any]] = []
    args: list[Any] = []
    rules = rules or Validation(typ.pos)
    if typ.is_inline_enum:
        cls = "fields.EnumField"
        args.append(List(list(typ.enum_values)))
    elif schema.enum(typ.name) is not None:
        cls = "fields.EnumField"
        args.append(Raw(enum_constant(typ.name)))
        kwargs.append(("component", component_name(schema, typ.name)))
    elif typ.name == "string":
        cls, kwargs = _string(rules)
    elif typ.name in _INT_RANGES:
        cls = "serializers.IntegerField" if text_input else "fields.StrictIntegerField"
        kwargs = _int_bounds(typ.name, rules)
    elif typ.name in ("float32", "float64"):
        cls = "serializers.FloatField" if text_input else "fields.StrictFloatField"
        kwargs = _float_bounds(rules)
    elif typ.name == "bool":
        cls = "serializers.BooleanField" if text_input else "fields.StrictBooleanField"
    elif typ.is_scalar:
        cls = _SIMPLE[typ.name]
    else:
        cls = serializer_class(typ.name)
    if default is not None and default.kind == "now":
        kwargs.append(("required", False))
    elif default is not None:
        kwargs.append(("default", _default_value(typ, default)))
    elif typ.optional:
        kwargs.append(("required", False))
    if typ.optional:
        kwargs.append(("allow_null", True))
    return Call(cls, args, kwargs)


def _string(rules: Validation) -> tuple[str, list[tuple[str, Any]]]:
    kwargs: list[tuple[str, Any]] = []
    if rules.format == "uuid":
        return "fields.UUIDStringField", kwargs
    cls = {"email": "fields.EmailStringField", "url": "fields.URLStringField"}.get(
        rules.format or "", "fields.StringField"
    )
    if rules.min_len is not None:
        kwargs.append(("min_length", rules.min_len))
    if rules.max_len is not None:
        kwargs.append(("max_length", rules.max_len))
    if cls == "fields.StringField" and not rules.min_len:
        kwargs.append(("allow_blank", True))
    kwargs.append(("trim_whitespace", False))
    return cls, kwargs


def _int_bounds(scalar: str, rules: Validation) -> list[tuple[str, Any]]:
    low, high = _INT_RANGES[scalar]
    if rules.gte is not None:
        low = max(low, math.ceil(rules.gte))
    if rules.gt is not None:
        low = max(low, math.floor(rules.gt) + 1)
    if rules.lte is not None:
        high = min(high, math.floor(rules.lte))
    if rules.lt is not None:
        high = min(high, math.ceil(rules.lt) - 1)
    return [("min_value", low), ("max_value", high)]


def _float_bounds(rules: Validation) -> list[tuple[str, Any]]:
    kwargs: list[tuple[str, Any]] = []
    if rules.gte is not None:
        kwargs.append(("min_value", rules.gte))
    if rules.lte is not None:
        kwargs.append(("max_value", rules.lte))
    validators = []
    if rules.gt is not None:
        validators.append(Call("fields.GreaterThanValidator", [rules.gt]))
    if rules.lt is not None:
        validators.append(Call("fields.LessThanValidator", [rules.lt]))
    if validators:
        kwargs.append(("validators", List(validators)))
    return kwargs


def _default_value(typ: TypeRef, default: Default) -> Any:
    value = default.value
    if typ.name == "bool" and isinstance(value, str):
        return value.lower() == "true"
    if typ.name in _INT_RANGES and isinstance(value, float) and value.is_integer():
        return int(value)
    if typ.name in ("float32", "float64") and isinstance(value, int):
        return float(value)
    return value

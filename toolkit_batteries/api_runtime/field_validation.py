"""One callable per serializer field that validates a request value as DRF would, faster.

``Field.run_validation`` costs a dozen Python calls per string (empty-value checks, the
``validators`` property, four validators each going through ``BaseValidator.__call__``,
``clean`` and ``compare``, and a generator calling ``ord`` on every character to refuse
surrogates). A generated request serializer validates every member of every request
that way, which made a generated POST cost a third more than a plain view checking the
same rules by hand. :func:`field_check` returns a callable with ``run_validation``'s
contract, built once per field:

- for a value it can prove valid (a non-blank ``str`` within the length bounds, without
  NUL or surrogates, passing the field's other validators) it returns what
  ``run_validation`` would return, using C-level ``len``/``in``/``isascii`` checks;
- for anything else it calls the field's own ``run_validation``, so every error, and
  every field this module does not model, answers exactly as DRF does.

Only fields whose class keeps DRF's own ``run_validation``, ``validate_empty_values`` and
``run_validators`` (and, for strings, ``CharField.to_internal_value``) get a fast path;
a subclass overriding any of them keeps ``run_validation`` as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import (
    MaxLengthValidator,
    MaxValueValidator,
    MinLengthValidator,
    MinValueValidator,
    ProhibitNullCharactersValidator,
)
from rest_framework.exceptions import ValidationError
from rest_framework.fields import CharField, Field, empty
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from .fields import GreaterThanValidator, LessThanValidator, _StrictText

__all__ = ["field_check"]

#: What ``ProhibitSurrogateCharactersValidator`` refuses (it tests ``ord`` per character).
_SURROGATE = re.compile("[\ud800-\udfff]")
_INVALID = (ValidationError, DjangoValidationError)
_NO_LIMIT = 1 << 62


def field_check(field: Field) -> Callable[[Any], Any]:
    """Return a callable doing what ``field.run_validation`` does (see the module)."""
    slow = field.run_validation
    kind = type(field)
    if (
        kind.validate_empty_values is not Field.validate_empty_values
        or kind.run_validators is not Field.run_validators
        or any(getattr(v, "requires_context", False) for v in field.validators)
    ):
        return slow
    if kind.run_validation is CharField.run_validation and _plain_text(kind):
        return _text_check(field, slow)
    if kind.run_validation is Field.run_validation:
        return _value_check(field, slow)
    return slow


def _plain_text(kind: type) -> bool:
    """Return True when ``kind`` converts text with ``CharField.to_internal_value``.

    Either directly or through :class:`~.fields._StrictText` (which only refuses
    non-strings first, which a ``str`` never is).
    """
    owners = [k for k in kind.__mro__ if "to_internal_value" in vars(k)]
    return CharField in owners and owners[: owners.index(CharField)] in ([], [_StrictText])


def _text_check(field: CharField, slow: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Return the check of a ``CharField``: lengths, NUL and surrogates without calls."""
    trim = field.trim_whitespace
    low, high = 1, _NO_LIMIT  # the empty string is the slow path's (blank) case
    no_nul = no_surrogate = False
    others = []
    for validator in field.validators:
        kind = type(validator)
        limit = getattr(validator, "limit_value", None)
        if kind is MaxLengthValidator and type(limit) is int:
            high = min(high, limit)
        elif kind is MinLengthValidator and type(limit) is int:
            low = max(low, limit)
        elif kind is ProhibitNullCharactersValidator:
            no_nul = True
        elif kind is ProhibitSurrogateCharactersValidator:
            no_surrogate = True
        else:
            others.append(validator)
    bounds, calls = _split(others)
    surrogate = _SURROGATE.search

    def check(data: Any) -> Any:
        if type(data) is str:
            value = data.strip() if trim else data
            if (
                low <= len(value) <= high
                and not (no_nul and "\x00" in value)
                and not (no_surrogate and not value.isascii() and surrogate(value))
            ):
                try:
                    for within in bounds:
                        if not within(value):
                            return slow(data)
                    for validator in calls:
                        validator(value)
                except _INVALID:
                    return slow(data)
                return value
        return slow(data)

    return check


def _value_check(field: Field, slow: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Return the check of any other field keeping ``Field.run_validation``.

    A present, non-null value goes through the field's own ``to_internal_value`` (its
    errors are the slow path's too, since that is the first thing the slow path would
    fail on); a validator refusing the result hands over to the slow path for the full
    error list.
    """
    convert = field.to_internal_value
    bounds, calls = _split(field.validators)

    def check(data: Any) -> Any:
        if data is empty or data is None:
            return slow(data)
        value = convert(data)
        try:
            for within in bounds:
                if not within(value):
                    return slow(data)
            for validator in calls:
                validator(value)
        except _INVALID:
            return slow(data)
        return value

    return check


def _split(
    validators: list[Any],
) -> tuple[tuple[Callable[[Any], bool], ...], tuple[Callable[[Any], Any], ...]]:
    """Return ``validators`` as comparisons (True: valid) and the rest, to call as they are.

    A bound (``BaseValidator``, whose ``compare`` is True for an invalid value) becomes
    that comparison, negated: one call instead of ``__call__``, ``clean`` and ``compare``.
    """
    bounds: list[Callable[[Any], bool]] = []
    calls: list[Callable[[Any], Any]] = []
    for validator in validators:
        kind, limit = type(validator), getattr(validator, "limit_value", None)
        if callable(limit) or kind not in _NEGATED:
            calls.append(validator)
        else:
            bounds.append(_NEGATED[kind](limit))
    return tuple(bounds), tuple(calls)


#: Bound validator -> "certainly valid" predicate of its limit.
_NEGATED: dict[type, Callable[[Any], Callable[[Any], bool]]] = {
    MaxValueValidator: lambda limit: lambda value: not value > limit,
    MinValueValidator: lambda limit: lambda value: not value < limit,
    GreaterThanValidator: lambda limit: lambda value: not value <= limit,
    LessThanValidator: lambda limit: lambda value: not value >= limit,
}

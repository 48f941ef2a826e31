"""An error that declares ``params`` and ``template`` gets its constructor from them.

The batteries' one-message errors are declarations (``PaymentNotFoundError``,
``QueueClosedError``, ...), so the rule they all rely on is proven once here: the
arguments bind like a written ``__init__`` (positional or by name, a missing or extra one
refused), each is kept as an attribute, the message is the template filled in, and a
subclass without its own template inherits the parent's constructor.
"""

from __future__ import annotations

import inspect

import pytest

from toolkit_batteries.core.errors import ToolkitError
from toolkit_batteries.payment.errors import InvalidPaymentError, PaymentNotFoundError
from toolkit_batteries.queue.errors import QueueClosedError, QueueError


class _Refused(ToolkitError, ValueError):
    code = "refused"
    params = ("instance", "field", "limit")
    template = 'svc.{instance}: "{field}" over {limit:g}s'


class _Child(_Refused):
    code = "child_refused"


def test_the_arguments_bind_by_position_or_name_and_are_kept() -> None:
    by_position = _Refused("default", "timeout", 2.5)
    by_name = _Refused(limit=2.5, field="timeout", instance="default")
    for error in (by_position, by_name):
        assert str(error) == 'svc.default: "timeout" over 2.5s'
        assert (error.instance, error.field, error.limit) == ("default", "timeout", 2.5)  # type: ignore[attr-defined]
        assert error.args == ('svc.default: "timeout" over 2.5s',)
    assert list(inspect.signature(_Refused).parameters) == ["instance", "field", "limit"]


def test_a_missing_or_extra_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="limit"):
        _Refused("default", "timeout")
    with pytest.raises(TypeError):
        _Refused("default", "timeout", 1, 2)
    with pytest.raises(TypeError, match="unexpected"):
        _Refused("default", "timeout", 1, reason="x")


def test_a_subclass_without_a_template_inherits_the_constructor() -> None:
    error = _Child("a", "b", 1)
    assert str(error) == 'svc.a: "b" over 1s'
    assert error.code == "child_refused"
    assert isinstance(error, ValueError)


def test_battery_errors_keep_their_messages_codes_and_attributes() -> None:
    missing = PaymentNotFoundError("default", "pay_1")
    assert str(missing) == "payment.default: no payment pay_1"
    assert missing.code == "not_found" and missing.instance == "default"
    assert isinstance(missing, LookupError)
    invalid = InvalidPaymentError("eu", "amount", "must be positive")
    assert str(invalid) == 'payment.eu: "amount" must be positive'
    assert invalid.field == "amount" and invalid.code == "invalid_argument"
    closed = QueueClosedError("jobs")
    assert str(closed) == "queue.jobs: the queue is closed"
    assert isinstance(closed, QueueError) and isinstance(closed, RuntimeError)


def test_a_value_holding_braces_is_not_formatted_again() -> None:
    """A reason that itself holds ``{...}`` appears as given, never re-interpreted."""
    error = InvalidPaymentError("default", "metadata", "key {secret} is reserved")
    assert str(error) == 'payment.default: "metadata" key {secret} is reserved'


def test_a_template_naming_an_undeclared_argument_fails_at_class_creation() -> None:
    """A typo in a template is found when the module is imported, not at the first raise."""
    with pytest.raises(TypeError, match=r"_Typo\.template names \['instnace'\] outside params"):

        class _Typo(ToolkitError):
            params = ("instance",)
            template = "svc.{instnace}: refused"


def test_without_params_the_arguments_are_the_template_s_names_in_order() -> None:
    """Each name is written once: the template's placeholders are the constructor's arguments."""

    class _Derived(ToolkitError, KeyError):
        template = "svc.{instance}: {key!r} over {limit:g} ({instance})"

    assert _Derived.params == ("instance", "key", "limit")
    error = _Derived("eu", "k", 2.0)
    assert (error.instance, error.key, error.limit) == ("eu", "k", 2.0)  # type: ignore[attr-defined]
    # A KeyError's str() would quote the message; a toolkit error's is the message.
    assert str(error) == "svc.eu: 'k' over 2 (eu)"

"""The Logger base class: what every adapter, including third-party ones, inherits."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.log import LEVELS, WARN, Logger
from toolkit_batteries.log.adapters.slog import SlogLogger
from toolkit_batteries.log.base import safe_fields
from toolkit_batteries.log.options import LogOptions


class ListLogger(Logger):
    """A minimal third-party adapter: only ``_emit``."""

    adapter_name = "list"

    def __init__(self, *, min_level: int = 0) -> None:
        super().__init__(min_level=min_level)
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def _emit(self, level: int, msg: str, fields: dict[str, Any]) -> None:
        self.lines.append((LEVELS[level], msg, fields))


def test_a_third_party_adapter_opens_by_dotted_path_and_inherits_the_rules() -> None:
    settings = {"log": {"adapter": f"{__name__}.ListLogger", "options": {"min_level": WARN}}}
    log = Container(Config.load(settings, {})).log()
    assert isinstance(log, ListLogger) and log.min_level == WARN
    log.info("dropped", token="t")
    log.bind(request_id="r-1", secret="shh").error("kept", user="ada")
    assert log.lines == [
        ("error", "kept", {"request_id": "r-1", "secret": "[redacted]", "user": "ada"})
    ]


@pytest.mark.parametrize("value", [True, "1", 1.0, None])
def test_min_level_must_be_an_integer(value: object) -> None:
    with pytest.raises(InvalidOptionsError, match="must be an integer"):
        SlogLogger(min_level=value)  # type: ignore[arg-type]


def test_open_names_the_instance_when_options_bypass_config() -> None:
    ctx = OpenContext("log", "audit", "slog", LogOptions(min_level=9), None, None)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionsError) as caught:
        SlogLogger.open(ctx)
    assert str(caught.value) == 'log.audit: option "min_level" must be between 0 and 4'


def test_msg_is_positional_so_any_field_name_works() -> None:
    log = ListLogger()
    log.info("hello", msg="a field called msg", self="and one called self")
    assert log.lines[0][2] == {"msg": "a field called msg", "self": "and one called self"}


def test_safe_fields_turns_objects_into_masked_text() -> None:
    ident = uuid.UUID(int=1)
    fields = safe_fields(
        {
            "id": ident,
            "error": ValueError("dial redis://:pw-value@cache:6379/0"),
            "items": ("a", {"api_key": "k"}),
            "header": "Authorization: Bearer abc.def",
        }
    )
    assert fields == {
        "id": str(ident),
        "error": "dial redis://:[redacted]@cache:6379/0",
        "items": ["a", {"api_key": "[redacted]"}],
        "header": "Authorization: Bearer [redacted]",
    }


def test_bind_on_a_disabled_level_costs_no_rendering() -> None:
    class Exploding:
        def __str__(self) -> str:
            raise AssertionError("rendered a field of a dropped line")

    log = ListLogger(min_level=WARN)
    log.bind(obj=Exploding()).debug("dropped")
    assert log.lines == []


def test_repr_names_adapter_and_level() -> None:
    assert repr(SlogLogger(min_level=2)) == "<SlogLogger slog min_level=2>"

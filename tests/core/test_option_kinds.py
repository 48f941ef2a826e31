"""Options that check themselves: declared shape rules, the one walker, Duration.seconds."""

from __future__ import annotations

import dataclasses
import importlib
from datetime import timedelta
from pathlib import Path

import pytest

from toolkit_batteries.core import option_kinds as kinds
from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.option_kinds import Rule, RuleContext
from toolkit_batteries.core.options import Duration, field_specs

SECRET = "hunter2-secret"
BATTERIES = Path(__file__).resolve().parents[2] / "toolkit_batteries"


def _messages(service: str, block: dict) -> list:
    return service_checks(service, Config.load({service: block}, {}))


def test_a_rule_reports_under_its_own_id_naming_the_field_never_the_value() -> None:
    block = {"adapter": "db", "options": {"dsn": f"mysql://u:{SECRET}@h/db", "max_entries": -1}}
    messages = _messages("cache", block)
    assert [m.id for m in messages] == ["toolkit_cache.E003", "toolkit_cache.E004"]
    assert messages[0].msg.startswith('cache.default: option "dsn" ')
    assert messages[1].msg == 'cache.default: option "max_entries" is negative'
    assert all(SECRET not in f"{m.msg} {m.hint}" for m in messages)


def test_a_rule_scoped_to_adapters_leaves_the_others_alone() -> None:
    assert _messages("cache", {"adapter": "memory", "options": {"dsn": "mysql://h/db"}}) == []


def test_a_rule_with_each_false_reports_the_first_failing_field_once() -> None:
    block = {"adapter": "log", "options": {"timeout": "-1s", "max_message_size": -1}}
    (message,) = [m for m in _messages("mailer", block) if m.id == "toolkit_mailer.E003"]
    assert message.msg == 'mailer.default: option "timeout" is negative'


def test_rules_inside_nested_blocks_name_the_dotted_field() -> None:
    block = {"adapter": "remotecfg", "options": {"remotecfg": {"ttl": "-5s"}}}
    found = [m.msg for m in _messages("flag", block) if m.id == "toolkit_flag.E005"]
    assert found == ['flag.default: option "remotecfg.ttl" is not positive']


def test_a_hint_template_is_filled_and_literal_braces_stay() -> None:
    (message,) = _messages("payment", {"adapter": "payment_b", "options": {"webhook_secret": "w"}})
    assert (message.id, message.hint) == ("toolkit_payment.E002", "set PAYMENT__DEFAULT__API_KEY")
    legacy = _messages("cache", {"options": {"adapter": "kvserver"}})
    assert legacy[0].hint == 'set the adapter outside "options": {"adapter": ..., "options": {...}}'


@dataclasses.dataclass
class _Flags:
    url: str = ""
    on: bool = False
    block: object = None


def _context(options: object, adapter: str = "a") -> RuleContext:
    return RuleContext("svc", "default", adapter, options)


@pytest.mark.parametrize(
    ("rule", "value", "failing"),
    [
        (kinds.non_negative("x.E1"), timedelta(seconds=-1), True),
        (kinds.non_negative("x.E1"), 0, False),
        (kinds.positive("x.E1"), timedelta(0), True),
        (kinds.between("x.E1", 1, 10), 11, True),
        (kinds.between("x.E1", 1, 10), 10, False),
        (kinds.choice("x.E1", ("a", "b")), "c", True),
        (kinds.choice("x.E1", ("a", "b")), "", False),
        (kinds.matches("x.E1", r"[a-z]+", "is not lower case"), "ABC", True),
        (kinds.required("x.E1"), "  ", True),
        (kinds.warn_when_set("x.W1", "is on"), False, False),
        (kinds.warn_when_set("x.W1", "is on"), True, True),
        (kinds.sql_target("x.E1"), "mysql://h/db", True),
        (kinds.sql_target("x.E1"), "postgres://h/db", False),
        (kinds.sql_target("x.E1"), "", False),
    ],
)
def test_each_kind_tells_a_failing_value(rule: Rule, value: object, failing: bool) -> None:
    assert (rule.test(value, _context(_Flags()), "f") is not None) is failing


def test_the_url_kind_reads_its_allow_flags_by_path() -> None:
    rule = kinds.url("x.E1", insecure="block.on", private="*")
    strict = _context(_Flags(block=_Flags(on=False)))
    relaxed = _context(_Flags(block=_Flags(on=True)))
    reason = rule.test(f"http://u:{SECRET}@example.com", strict, "endpoint")
    assert reason is not None and SECRET not in reason and "block.on" in reason
    assert rule.test("http://example.com", relaxed, "endpoint") is None
    assert rule.test("", strict, "endpoint") is None
    assert kinds.url("x.E1", always=("a",)).test("", strict, "endpoint") is not None


def test_a_path_under_its_base_may_not_escape_it(tmp_path: Path) -> None:
    rule = kinds.path_under("x.E1", base=lambda: str(tmp_path))
    assert rule.test("data/file.json", _context(_Flags()), "path") is None
    assert rule.test("../outside.json", _context(_Flags()), "path") == "escapes its base"
    assert rule.test("/etc/passwd", _context(_Flags()), "path") == "escapes its base"


def _declared_rules() -> list[tuple[str, Rule]]:
    """Every rule any battery's options declare, with the battery it belongs to."""
    found: list[tuple[str, Rule]] = []
    for path in sorted(BATTERIES.glob("*/options.py")):
        service = path.parent.name
        module = importlib.import_module(f"toolkit_batteries.{service}.options")
        for value in vars(module).values():
            if not (isinstance(value, type) and dataclasses.is_dataclass(value)):
                continue
            if value.__module__ != module.__name__:
                continue
            if not all("checks" in f.metadata for f in dataclasses.fields(value)):
                continue  # a plain dataclass, not options declared with option()
            found += [(service, rule) for rule in getattr(value, "__checks__", ())]
            for spec in field_specs(value).values():
                found += [(service, rule) for rule in spec.checks]
    return found


def test_every_declared_rule_reports_under_its_own_battery() -> None:
    rules = _declared_rules()
    assert len(rules) > 40
    assert [
        rule.id for service, rule in rules if not rule.id.startswith(f"toolkit_{service}.")
    ] == []


def test_duration_seconds_is_the_one_conversion() -> None:
    assert Duration.seconds(timedelta(milliseconds=250)) == 0.25
    assert Duration.seconds(3) == 3.0
    assert Duration.seconds(None, default=30.0) == 30.0
    assert Duration.seconds(timedelta(0), default=5.0) == 5.0
    assert Duration.seconds(-1.5) == -1.5
    with pytest.raises(TypeError, match="ttl"):
        Duration.seconds("5s", field="ttl")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Duration.seconds(True)

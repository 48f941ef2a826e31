"""The one system check over declared option rules (:mod:`.option_kinds`).

Each battery's check (:func:`toolkit_batteries.core.checks.battery_check`) calls
:func:`declared_option_messages` after ``E001``: it walks every configured instance's
options by their declarations (class ``__checks__`` and ``option(checks=...)``) and
reports each broken rule under the rule's own ID, so a battery writes no shape checks.
:func:`service_checks` is the same plus the battery's own behaviour checks, without the
registry (for tests and tools).
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import import_module
from typing import TYPE_CHECKING, Any

from django.core import checks

from .option_kinds import Rule, RuleContext
from .options import field_specs

if TYPE_CHECKING:
    from .config import Config

__all__ = ["declared_option_messages", "service_checks"]

_OBJ = "settings.TOOLKIT"


def declared_option_messages(config: Config, service: str) -> list[checks.CheckMessage]:
    """Report every shape rule broken by a configured instance of ``service``.

    Rules come from the options class (``__checks__``, in declaration order, inherited)
    then from each field's ``option(checks=...)`` in field order, nested blocks included.
    Instances whose adapter does not resolve are skipped (``E001`` reports them).
    """
    from .checks import resolved_instances  # local: checks imports this module

    messages: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, service):
        context = RuleContext(service, cfg.instance, adapter, cfg.options)
        for rule in _declared_rules(type(cfg.options)):
            if rule.applies(adapter, cfg.options):
                messages.extend(_rule_messages(rule, context))
    return messages


def service_checks(service: str, config: Config) -> list[checks.CheckMessage]:
    """Return a battery's checks for ``config``: its declared rules, then its own checks.

    This is what ``manage.py check`` reports for ``service`` after ``E001``, without the
    registry: tests and tools call it with a configuration they loaded themselves.
    """
    messages = declared_option_messages(config, service)
    name = f"toolkit_batteries.{service}.checks"
    try:
        module = import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return messages
    hook = getattr(module, "battery_checks", None)
    return messages + (list(hook(config)) if callable(hook) else [])


def _declared_rules(cls: type) -> list[Rule]:
    """Return the rules of an options class, each bound to its field paths."""
    rules = list(getattr(cls, "__checks__", ()))

    def walk(klass: type, prefix: str) -> None:
        for name, spec in field_specs(klass).items():
            path = prefix + name
            rules.extend(rule if rule.fields else rule.on(path) for rule in spec.checks)
            if spec.kind in ("nested", "optional_nested") and spec.nested is not None:
                walk(spec.nested, path + ".")

    walk(cls, "")
    return rules


def _rule_messages(rule: Rule, context: RuleContext) -> Iterator[checks.CheckMessage]:
    kind = checks.Warning if rule.warning else checks.Error
    for field in rule.fields:
        value: Any = context.options
        for part in filter(None, field.split(".")):
            value = getattr(value, part, None)
        if field and value is None:
            continue  # an optional block that is not configured
        reason = rule.test(value, context, field)
        if reason is None:
            continue
        reason = rule.render(reason, context, field, "")  # "required by the {adapter} adapter"
        hint = None if rule.hint is None else rule.render(rule.hint, context, field, reason)
        text = rule.render(rule.message, context, field, reason)
        yield kind(text, hint=hint, obj=_OBJ, id=rule.id)
        if not rule.each:
            return

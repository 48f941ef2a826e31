"""Shape rules an option declares, checked by the one core system check.

An option states what a well-formed value looks like next to its default, so no battery
hand-writes "is negative" or "not a SQL target" checks::

    max_entries: int = option(1000, checks=non_negative("toolkit_cache.E004"))
    dsn: str = option("", checks=sql_target("toolkit_cache.E003", adapters=("db",)))

A rule for an inherited field (a shared option group) or for several fields at once is
declared on the options class instead, with the fields it covers::

    __checks__ = (kv_address("toolkit_cache.E002", adapters=("kvserver",)),)

Besides values' shapes, rules look at the machine without running anything (a file that
exists, a key file others cannot read, a program on PATH), parse with the battery's own
parser (a key ring, ``opens``), or relate fields (``relation(id, test)``; ``when=`` gates
any rule on the options), so ``checks.py`` is left with checks about behaviour.

:func:`toolkit_batteries.core.checks.declared_option_messages` walks every configured
instance's options by these declarations and reports with each rule's own check ID (the
battery's, so messages and IDs stay those of the battery). A rule's message names the
service, instance and field, never the value. Rules are checks, not decoding: a value that
breaks one still loads (``manage.py check`` reports it), exactly as the hand-written checks
they replace did. This module imports nothing heavy: options classes import it at settings
time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

__all__ = [
    "NEGATIVE_HINT",
    "Rule",
    "RuleContext",
    "between",
    "both_or_neither",
    "choice",
    "file_exists",
    "keyring",
    "kv_address",
    "matches",
    "non_negative",
    "opens",
    "path_under",
    "positive",
    "private_file",
    "program",
    "relation",
    "required",
    "reserved_kv_url",
    "secret_set",
    "sql_target",
    "url",
    "warn_when_set",
    "webhook_provider",
]

#: The hint of the "is negative" rules.
NEGATIVE_HINT = "use a positive value, or leave it unset for the default"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_FIELD_MESSAGE = '{where}: option "{field}" {reason}'
_SQL_HINT = "use a postgres:// URL, a libpq string or a SQLite file path"
_KV_HINT = "use host:port or a redis:// / rediss:// URL; require_tls needs tls or a rediss:// URL"


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What a rule sees besides the value: where the options come from."""

    service: str
    instance: str
    adapter: str
    options: Any

    @property
    def where(self) -> str:
        """``service.instance``, the prefix of every message."""
        return f"{self.service}.{self.instance}"


#: ``test(value, context, field)`` returns a value-free reason, or ``None`` when fine.
Test = Callable[[Any, RuleContext, str], "str | None"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One shape rule: which fields, which adapters, which check ID and text."""

    id: str
    test: Test
    fields: tuple[str, ...] = ()
    hint: str | None = None
    adapters: tuple[str, ...] = ()
    #: Adapters the rule skips (``("memory",)``: every adapter that stores elsewhere).
    unless: tuple[str, ...] = ()
    #: Template over ``{where}``, ``{field}``, ``{reason}``, ``{adapter}``, ``{instance}``,
    #: and ``{INSTANCE}``/``{FIELD}`` (upper case, as in environment variable names).
    message: str = _FIELD_MESSAGE
    #: One message per failing field; ``False``: one message for the first failing field.
    each: bool = True
    warning: bool = False
    #: ``when(options)``: the rule runs only when it is true (a field another one depends on).
    when: Callable[[Any], bool] | None = None

    def on(self, *fields: str) -> Rule:
        """Return this rule for ``fields`` (dotted paths), for a class-level declaration."""
        return replace(self, fields=fields)

    def applies(self, adapter: str, options: Any = None) -> bool:
        """Tell whether an instance on ``adapter`` (with ``options``) is checked by this rule."""
        if (self.adapters and adapter not in self.adapters) or adapter in self.unless:
            return False
        return self.when is None or bool(self.when(options))

    def render(self, text: str, context: RuleContext, field: str, reason: str) -> str:
        """Fill a message or hint template; other braces (a JSON example) stay as written."""
        values = {
            "where": context.where,
            "field": field,
            "reason": reason,
            "adapter": context.adapter,
            "instance": context.instance,
            "INSTANCE": context.instance.upper(),
            "FIELD": field.replace(".", "__").upper(),
        }
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def _rule(test: Test, check_id: str, **kwargs: Any) -> Rule:
    return Rule(id=check_id, test=test, **{k: v for k, v in kwargs.items() if v is not None})


def _number(value: Any) -> float | None:
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


# --------------------------------------------------------------------------- numbers


def non_negative(check_id: str, *, hint: str | None = NEGATIVE_HINT, **kwargs: Any) -> Rule:
    """Require a number, size or duration that is not below zero (``option "x" is negative``)."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        number = _number(value)
        return "is negative" if number is not None and number < 0 else None

    return _rule(test, check_id, hint=hint, **kwargs)


def positive(check_id: str, **kwargs: Any) -> Rule:
    """Require a number or duration above zero (``option "x" is not positive``)."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        number = _number(value)
        return "is not positive" if number is not None and number <= 0 else None

    return _rule(test, check_id, **kwargs)


def between(check_id: str, low: float, high: float, **kwargs: Any) -> Rule:
    """Require a number or duration (in seconds) within ``[low, high]``."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        number = _number(value)
        if number is None or low <= number <= high:
            return None
        return f"is not between {low:g} and {high:g}"

    return _rule(test, check_id, **kwargs)


# --------------------------------------------------------------------------- text


def choice(check_id: str, choices: tuple[str, ...], **kwargs: Any) -> Rule:
    """Require a string that is empty (unset) or one of ``choices``."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        if not value or str(value) in choices:
            return None
        return "must be one of: " + ", ".join(choices)

    return _rule(test, check_id, **kwargs)


def matches(check_id: str, pattern: str, reason: str, **kwargs: Any) -> Rule:
    """Require a string that is empty (unset) or matches ``pattern`` in full."""
    compiled = re.compile(pattern)

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        text = str(value or "").strip()
        return reason if text and not compiled.fullmatch(text) else None

    return _rule(test, check_id, **kwargs)


def required(
    check_id: str, reason: str = "is required by the {adapter} adapter", **kwargs: Any
) -> Rule:
    """Require a string that is not blank on the rule's adapters."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        return None if str(value or "").strip() else reason

    return _rule(test, check_id, **kwargs)


def secret_set(check_id: str, reason: str = "is not set", **kwargs: Any) -> Rule:
    """Require a secret to be set (the reason never includes it: it is empty)."""
    return required(check_id, reason, **kwargs)


def warn_when_set(check_id: str, reason: str, **kwargs: Any) -> Rule:
    """Warn about an option that is set: ignored (reserved, legacy) or risky (a flag on)."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        is_set = bool(value) and (not isinstance(value, str) or bool(value.strip()))
        return reason if is_set else None

    kwargs.setdefault("warning", True)
    return _rule(test, check_id, **kwargs)


def webhook_provider(
    service: str,
    providers: tuple[str, str],
    *,
    url_hint: str,
    negative: str,
    unsigned: str,
    unsigned_hint: str,
) -> tuple[Rule, ...]:
    """Return the rules of a battery of two keyed providers that sign their webhooks.

    ``billing`` and ``payment`` have the same account shape, so it is declared once:
    ``providers[0]`` needs ``secret_key`` and ``providers[1]`` ``api_key`` (``E002``),
    ``endpoint`` is a URL (``E003``), the webhook bounds are not negative (``E004``, one
    message, ``negative``) and an empty ``webhook_secret`` warns (``W001``, ``unsigned``).
    """
    ids = f"toolkit_{service}."
    key_hint = f"set {service.upper()}__{{INSTANCE}}__{{FIELD}}"
    return (
        required(ids + "E002", adapters=providers[:1], hint=key_hint).on("secret_key"),
        required(ids + "E002", adapters=providers[1:], hint=key_hint).on("api_key"),
        url(ids + "E003", adapters=providers, hint=url_hint).on("endpoint"),
        non_negative(ids + "E004", hint=None, each=False, message=negative).on(
            "max_webhook_bytes", "webhook_tolerance"
        ),
        secret_set(ids + "W001", unsigned, warning=True, adapters=providers, hint=unsigned_hint).on(
            "webhook_secret"
        ),
    )


def path_under(check_id: str, base: Callable[[], str], **kwargs: Any) -> Rule:
    """Require a relative path that stays inside ``base()`` (no ``..`` escape, no absolute path)."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        import os

        text = str(value or "").strip()
        if not text:
            return None
        root = os.path.realpath(base())
        full = os.path.realpath(os.path.join(root, text))
        return None if full == root or full.startswith(root + os.sep) else "escapes its base"

    return _rule(test, check_id, **kwargs)


# --------------------------------------------------------------------------- connections


def sql_target(check_id: str, *, hint: str | None = _SQL_HINT, **kwargs: Any) -> Rule:
    """Require a DSN, when set, to be a SQL target (PostgreSQL URL or keywords, SQLite path)."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        from .pools import parse_sql_target

        text = str(value or "")
        if not text.strip():
            return None
        try:
            parse_sql_target(text)
        except ValueError as exc:
            return str(exc)
        return None

    return _rule(test, check_id, hint=hint, **kwargs)


def kv_address(
    check_id: str, *, block: str = "", hint: str | None = _KV_HINT, **kwargs: Any
) -> Rule:
    """Require a key-value server connection that resolves without connecting.

    ``block`` names the nested ``kvserver`` block (its ``url`` is reserved and ignored);
    without it the connection keys are flat and the flat ``url`` wins over ``addr``. The
    message is the resolver's own, naming the field (inside the block) and never the value.
    """

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        from .errors import InvalidOptionsError
        from .pools import resolve_kv_address

        url = "" if block else str(getattr(value, "url", "") or "")
        try:
            resolve_kv_address(context.service, value, instance=context.instance, url=url)
        except InvalidOptionsError as exc:
            text = str(exc)
            return text.replace('option "', f'option "{block}.', 1) if block else text
        return None

    return _rule(test, check_id, hint=hint, fields=(block or "",), message="{reason}", **kwargs)


def url(
    check_id: str,
    *,
    insecure: str | None = "allow_insecure",
    private: str | None = "allow_private",
    default: str = "",
    skip_prefix: str = "",
    always: tuple[str, ...] = (),
    **kwargs: Any,
) -> Rule:
    """Require an outbound URL the URL checker allows.

    https (http only with ``insecure``), no private host unless ``private``, no
    credentials. ``insecure``/``private`` name boolean options by path (``None``: never
    allowed; ``"*"``: always allowed). Empty takes ``default``; an empty URL with no
    default is not checked, except on the ``always`` adapters (where it is required).
    The message is the URL checker's own.
    """

    def flag(context: RuleContext, name: str | None) -> bool:
        if name == "*":
            return True
        value: Any = context.options
        for part in (name or "").split("."):
            value = getattr(value, part, False) if part else False
        return bool(value)

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        from .errors import InvalidOptionsError
        from .outbound import check_url

        text = str(value or "").strip() or default
        if not text and context.adapter not in always:
            return None
        if skip_prefix and text.lower().startswith(skip_prefix):
            return None
        try:
            check_url(
                text,
                service=context.service,
                field=field,
                instance=context.instance,
                allow_insecure=flag(context, insecure),
                allow_private=flag(context, private),
                insecure_option=insecure if insecure and insecure != "*" else "allow_insecure",
                private_option=private if private and private != "*" else "allow_private",
            )
        except InvalidOptionsError as exc:
            return str(exc)
        return None

    kwargs.setdefault("message", "{reason}")
    return _rule(test, check_id, **kwargs)


def reserved_kv_url(check_id: str, hint: str, **kwargs: Any) -> Rule:
    """Warn that the spec-reserved ``kvserver.url`` is set (it is ignored)."""
    kwargs.setdefault("adapters", ("kvserver",))
    return warn_when_set(check_id, "is reserved and ignored", hint=hint, **kwargs).on(
        "kvserver.url"
    )


def opens(check_id: str, validator: str, *, skip_empty: bool = False, **kwargs: Any) -> Rule:
    """Require the options to pass the validation opening runs (``"module:function"``).

    ``function(value, instance=...)`` (the whole options, or one field's value with
    ``.on(field)``) raises ``InvalidOptionsError`` naming the field;
    the check reports that text, so ``manage.py check`` fails the way opening would. The
    module is imported only when the check runs.
    """

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        from importlib import import_module

        from .errors import InvalidOptionsError

        if skip_empty and not value:
            return None
        module, _, name = validator.partition(":")
        try:
            getattr(import_module(module), name)(value, instance=context.instance)
        except InvalidOptionsError as exc:
            return str(exc)
        return None

    return _rule(test, check_id, fields=("",), message="{reason}", **kwargs)


def both_or_neither(check_id: str, first: str, second: str, **kwargs: Any) -> Rule:
    """Require two options to be set together or not at all (a key id and its secret)."""

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        if bool(getattr(value, first, None)) == bool(getattr(value, second, None)):
            return None
        return f'only one of "{first}" and "{second}" is set'

    kwargs.setdefault("message", "{where}: {reason}")
    return _rule(test, check_id, fields=("",), **kwargs)


# --------------------------------------------------------------------------- files, programs


def file_exists(
    check_id: str,
    *,
    missing: str | None = None,
    absent: str = "names a file that does not exist",
    readable: bool = False,
    **kwargs: Any,
) -> Rule:
    """Require a path option to name an existing file (``readable``: one this process reads).

    An empty value passes unless ``missing`` is given (its reason: ``"is required"``).
    Nothing is opened: the check looks at the file system entry only.
    """

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        import os

        path = str(value or "").strip()
        if not path:
            return missing
        ok = os.path.isfile(path) and (not readable or os.access(path, os.R_OK))
        return None if ok else absent

    return _rule(test, check_id, **kwargs)


def private_file(
    check_id: str, reason: str = "is readable by group or others", **kwargs: Any
) -> Rule:
    """Warn that the file an option names (a key file) is readable by group or others.

    The default message names the file by its option: ``the file of option "x" ...``.
    A missing file is not this rule's concern (``file_exists`` reports it).
    """

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        import os

        path = str(value or "").strip()
        if not path or not os.path.isfile(path):
            return None
        return reason if os.stat(path).st_mode & 0o077 else None

    kwargs.setdefault("warning", True)
    kwargs.setdefault("message", '{where}: the file of option "{field}" {reason}')
    return _rule(test, check_id, **kwargs)


def program(
    check_id: str,
    default: str | None = None,
    *,
    reason: str = "names a program not on PATH",
    command: bool = False,
    **kwargs: Any,
) -> Rule:
    """Require the program an option names (empty: ``default``, else the field's name) on PATH.

    ``command``: the value is a command line and its first word is the program. A value
    with a directory is checked as that file (it must be executable). Nothing is run.
    """

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        import shlex
        import shutil

        text = str(value or "").strip() or default or field.rsplit(".", 1)[-1]
        try:
            argv = shlex.split(text) if command else [text]
        except ValueError:
            return reason
        return None if argv and shutil.which(argv[0]) else reason

    return _rule(test, check_id, **kwargs)


def keyring(
    check_id: str, parser: str, size: int, *, skip_empty: bool = False, **kwargs: Any
) -> Rule:
    """Require a key option to parse as a key ring of ``size``-byte keys.

    ``parser`` is ``"module:function"`` called as ``function(text, size=, field=, instance=)``
    (the battery's own parser, the one opening uses), raising ``InvalidOptionsError`` whose
    text names the field and never the key. The module is imported only when the check runs.
    """

    def test(value: Any, context: RuleContext, field: str) -> str | None:
        from importlib import import_module

        from .errors import InvalidOptionsError

        text = str(value or "")
        if skip_empty and not text.strip():
            return None
        module, _, name = parser.partition(":")
        try:
            getattr(import_module(module), name)(
                text, size=size, field=field, instance=context.instance
            )
        except InvalidOptionsError as exc:
            return str(exc)
        return None

    kwargs.setdefault("message", "{reason}")
    return _rule(test, check_id, **kwargs)


# --------------------------------------------------------------------------- relations


def relation(check_id: str, test: Callable[[Any], str | None], **kwargs: Any) -> Rule:
    """Check options against each other: ``test(options)`` returns a value-free reason or None.

    ``test`` sees the whole options (or the block a ``.on(path)`` names), so a rule can say
    "only one of", "is not shorter than", "is set but the adapter ignores it". The message
    is ``{where}: {reason}``; the reason names the fields.
    """
    kwargs.setdefault("message", "{where}: {reason}")
    return _rule(lambda value, context, field: test(value), check_id, fields=("",), **kwargs)

"""Compile-time checking of ``schedule`` cron specs (no croniter needed at compile time).

The scheduler battery reads cron with croniter at run time; this module accepts the same
language the battery documents (docs/batteries/scheduler.md) so a schedule that compiles
also loads: five fields (minute, hour, day of month, month, day of week) of ``*``,
numbers, ranges ``a-b``, steps ``/n`` and lists ``a,b``, month and weekday names
(``jan``, ``mon``), or one of the ``@yearly`` family. Six-field (seconds) specs and
``@reboot`` are refused, as is a spec that never matches a date (``0 0 30 2 *``).
"""

from __future__ import annotations

import re

__all__ = ["CRON_ALIASES", "cron_problem"]

#: The ``@`` forms the scheduler accepts.
CRON_ALIASES: tuple[str, ...] = (
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
)
_FIELDS: tuple[tuple[str, int, int], ...] = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NAMES: dict[int, dict[str, int]] = {
    3: {m: i + 1 for i, m in enumerate(_MONTHS)},
    4: {d: i for i, d in enumerate(_DAYS)},
}
#: The most days each month can have (February in a leap year).
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_ITEM = re.compile(r"(?P<range>\*|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)?)(?:/(?P<step>[0-9]+))?\Z")


def cron_problem(spec: str) -> str | None:
    """Return why ``spec`` is not a valid schedule, or None when it is."""
    text = spec.strip()
    if not text:
        return "the cron spec is empty"
    if text.startswith("@"):
        if text.lower() in CRON_ALIASES:
            return None
        if text.lower() == "@reboot":
            return "@reboot is not a schedule (the scheduler fires on clock slots)"
        from .scanning import did_you_mean

        return f"unknown cron alias {text}{did_you_mean(text.lower(), CRON_ALIASES)}"
    parts = text.split()
    if len(parts) == 6:
        return (
            "six-field cron (with seconds) is not supported; the scheduler has one-minute "
            "resolution: use five fields (minute hour day-of-month month day-of-week)"
        )
    if len(parts) != 5:
        return (
            f"a cron spec has five fields (minute hour day-of-month month day-of-week), "
            f"found {len(parts)}"
        )
    chosen: list[set[int]] = []
    for index, (part, (what, low, high)) in enumerate(zip(parts, _FIELDS, strict=True)):
        values, problem = _field(part, index, what, low, high)
        if problem:
            return problem
        chosen.append(values)
    days, months = chosen[2], chosen[3]
    restricted_dom = parts[2] != "*"
    restricted_dow = parts[4] != "*"
    possible = any(day <= _MONTH_DAYS[month - 1] for month in months for day in days)
    if restricted_dom and not restricted_dow and not possible:
        return f'"{spec}" never matches a date (no chosen month has that day)'
    return None


def _value(token: str, index: int, what: str, low: int, high: int) -> tuple[int | None, str | None]:
    names = _NAMES.get(index, {})
    if token.lower() in names:
        return names[token.lower()], None
    if not token.isdigit():
        extra = (
            " or a name such as jan"
            if index == 3
            else " or a name such as mon"
            if index == 4
            else ""
        )
        return None, f'{what}: "{token}" is not a number{extra}'
    number = int(token)
    if not low <= number <= high:
        return None, f"{what}: {number} is out of range {low}-{high}"
    return number, None


def _field(part: str, index: int, what: str, low: int, high: int) -> tuple[set[int], str | None]:
    out: set[int] = set()
    for item in part.split(","):
        m = _ITEM.match(item)
        if m is None:
            return out, f'{what}: "{item}" is not a cron item (*, n, a-b, */n or a-b/n)'
        step = int(m.group("step")) if m.group("step") is not None else 1
        if step == 0:
            return out, f"{what}: a step of 0 never advances"
        span = m.group("range")
        if span == "*":
            first, last = low, high
        elif "-" in span:
            a, b = span.split("-", 1)
            start, problem = _value(a, index, what, low, high)
            if problem or start is None:
                return out, problem
            end, problem = _value(b, index, what, low, high)
            if problem or end is None:
                return out, problem
            if start > end:
                return out, f"{what}: the range {span} runs backwards"
            first, last = start, end
        else:
            start, problem = _value(span, index, what, low, high)
            if problem or start is None:
                return out, problem
            first = start
            last = high if m.group("step") is not None else start
        out.update(range(first, last + 1, step))
    return out, None

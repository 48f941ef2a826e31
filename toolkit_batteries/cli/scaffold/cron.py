"""The five-field cron expressions ``generate schedule`` accepts (checked before writing).

``minute hour day-of-month month day-of-week``; each field is ``*`` or a comma list of
values and ranges, each optionally stepped (``*/15``, ``1-5``, ``0,30``, ``10-50/10``).
Months and weekdays also take three-letter names (``jan``, ``mon-fri``). The expression
is written into Python source, so quotes, backslashes and newlines are refused outright.
"""

from __future__ import annotations

import re

from ..output import InvalidInputError

__all__ = ["check_cron"]

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
#: (field name, lowest, highest, names mapped to numbers).
_FIELDS = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {name: i + 1 for i, name in enumerate(_MONTHS)}),
    ("day of week", 0, 7, {name: i for i, name in enumerate(_DAYS)}),
)
_ITEM = re.compile(r"^(?P<range>\*|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)?)(?:/(?P<step>[0-9]+))?$")


def check_cron(spec: str) -> str:
    """Return ``spec`` with single spaces if it is a valid five-field expression; else exit 3."""
    if any(char in spec for char in "\"'\\\n\r"):
        raise InvalidInputError("invalid --cron: quotes, backslashes and newlines are not allowed")
    fields = spec.split()
    if len(fields) != 5:
        raise InvalidInputError(
            f"invalid --cron {spec!r}: want 5 fields (minute hour day-of-month month "
            f"day-of-week), got {len(fields)}"
        )
    for text, (what, low, high, names) in zip(fields, _FIELDS, strict=True):
        for item in text.split(","):
            problem = _check_item(item, low, high, names)
            if problem:
                raise InvalidInputError(
                    f"invalid --cron {spec!r}: {what} field {text!r}: {problem}"
                )
    return " ".join(fields)


def _check_item(item: str, low: int, high: int, names: dict[str, int]) -> str | None:
    match = _ITEM.fullmatch(item)
    if not match:
        return f"{item!r} is not a value, range or step"
    step = match.group("step")
    if step is not None and int(step) == 0:
        return "a step must be at least 1"
    part = match.group("range")
    if part == "*":
        return None
    bounds = []
    for value in part.split("-"):
        number = names.get(value.lower()) if not value.isdigit() else int(value)
        if number is None:
            return f"{value!r} is not a number" + (" or a name" if names else "")
        if not low <= number <= high:
            return f"{value} is outside {low}-{high}"
        bounds.append(number)
    if len(bounds) == 2 and bounds[0] > bounds[1]:
        return f"range {part!r} runs backwards"
    return None

"""How a refused check on one object answers: ``404`` unless the caller may read it.

A route that loads an object and then refuses the caller must not tell it apart from an
unknown id, or ids reveal what exists (another team's note answers 403, a made-up id
404). So a refusal answers ``404 not_found``, like an unknown id, on every verb, unless
the caller may *read* the object (then ``403``: it already knows the object exists).
``TOOLKIT_PERMISSION_DENIED_STATUS = 403`` restores the plain ``403`` for every refusal.
"""

from __future__ import annotations

from typing import Any

from toolkit_batteries.core.sidesettings import SideSetting, read_side_setting

__all__ = ["DENIED_STATUS", "denied_status", "hides_refusal"]

#: The declaration of ``TOOLKIT_PERMISSION_DENIED_STATUS``.
DENIED_STATUS = SideSetting(
    "TOOLKIT_PERMISSION_DENIED_STATUS",
    int,
    default=404,
    doc="status of a refused object check the caller may not read: 404 (default) or 403",
)

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def denied_status() -> int:
    """Return the configured status (404 or 403); another value fails naming the setting."""
    value = read_side_setting(DENIED_STATUS)
    if value not in (403, 404):
        raise DENIED_STATUS.fail("value", "must be 404 or 403")
    return value


def hides_refusal(
    authorizer: Any,
    subject: Any,
    *,
    method: str,
    action: str,
    read_action: str | None,
    obj: Any,
    owner_field: str | None = None,
) -> bool:
    """Tell whether a refused ``action`` on ``obj`` answers 404 (True) or 403 (False).

    A refused read (a safe method) is always hidden; a refused write is hidden unless the
    route names the object's ``read_action`` and the caller passes it.
    """
    if denied_status() == 403:
        return False
    if method.upper() in _SAFE_METHODS or not read_action or read_action == action:
        return True
    return not authorizer.check(subject, read_action, obj, owner_field=owner_field)

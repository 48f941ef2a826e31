"""The generated routes that ask the permission battery, found in the project's URLconf.

A schema's ``permission: check(...)`` becomes a :class:`~toolkit_batteries.api_runtime.views.Check`
in a generated viewset's ``checks``; what matters is what is *served*, so this module walks
Django's URL resolver (``ROOT_URLCONF``) rather than the schema files. The system check
``toolkit_permission.E004`` and the route reports use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["GuardedRpc", "guarded_rpcs"]


@dataclass(frozen=True, slots=True)
class GuardedRpc:
    """One served rpc whose route asks ``services.permission()``."""

    #: ``"NoteService.GetNote"``.
    rpc: str
    #: The checked action (``"note.read"``).
    action: str
    #: The permission instance asked (``HasPermission.instance``).
    instance: str
    #: The schema's ``owner_field`` ("" when the check names none).
    owner_field: str = ""


def _patterns(resolver: Any) -> Iterator[Any]:
    for entry in getattr(resolver, "url_patterns", ()):
        if hasattr(entry, "url_patterns"):
            yield from _patterns(entry)
        else:
            yield entry


def guarded_rpcs(urlconf: str | None = None) -> list[GuardedRpc]:
    """Return every served generated rpc with a ``permission: check``, sorted by rpc name."""
    from django.urls import get_resolver

    from toolkit_batteries.api_runtime.views import GeneratedViewSet

    found: dict[str, GuardedRpc] = {}
    for pattern in _patterns(get_resolver(urlconf)):
        view = getattr(pattern, "callback", None)
        cls = getattr(view, "cls", None)
        actions = getattr(view, "actions", None) or {}
        if not (isinstance(cls, type) and issubclass(cls, GeneratedViewSet)):
            continue
        for action in actions.values():
            check = cls.checks.get(action)
            if check is None:
                continue
            rpc = cls.rpcs.get(action, f"{cls.__name__}.{action}")
            instance = getattr(cls, "permission_instance", "default")
            found[rpc] = GuardedRpc(rpc, check.action, instance, check.owner_field)
    return [found[name] for name in sorted(found)]

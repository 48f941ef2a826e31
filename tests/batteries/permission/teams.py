"""The ``resource_roles`` hook of the team tests: Django groups stand for teams.

A resource names its team (``{"team": "blue"}``); a caller is a ``member`` of it when the
user whose primary key is the subject id belongs to the group of that name.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from toolkit_batteries.permission import Subject


def team_roles(subject: Subject, resource: Any) -> tuple[str, ...]:
    """Return ``("member",)`` when the caller belongs to the resource's team."""
    team = resource.get("team") if isinstance(resource, dict) else getattr(resource, "team", None)
    if not team or not subject.id.isdigit():
        return ()
    if User.objects.filter(pk=int(subject.id), groups__name=team).exists():
        return ("member",)
    return ()

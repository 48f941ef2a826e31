"""Find the project's schedules, and the jobs they name.

Schedules live in ``<app>/schedules.py`` of any installed app, as a ``SCHEDULES`` list,
plus the modules listed in the ``TOOLKIT_SCHEDULES`` setting (module paths)::

    # shop/schedules.py
    from toolkit_batteries.scheduler import Schedule
    from .jobs import send_digest

    SCHEDULES = [Schedule("digest", "0 8 * * 1-5", send_digest)]

A schedule names its job by object or by registered name; :func:`resolve_job` turns a
name into the job, importing the module part of a dotted name when the registry does
not know it yet (``"shop.jobs.send_digest"`` imports ``shop.jobs``).
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import Any

from toolkit_batteries.core.sidesettings import SideSetting, SideSettingError, read_side_setting

from .base import InvalidScheduleError, Schedule

__all__ = ["SETTING", "discover_schedules", "resolve_job", "schedule_modules"]

#: The Django setting listing extra schedule modules.
SETTING = "TOOLKIT_SCHEDULES"

#: Its declaration for the decoder of settings beside ``TOOLKIT`` (env: ``TOOLKIT_SCHEDULES``).
SCHEDULES = SideSetting(SETTING, tuple[str, ...], default=(), doc="extra schedule modules")


def schedule_modules() -> list[str]:
    """Return the module paths to read: every app's ``schedules`` then the setting's."""
    from django.apps import apps
    from django.conf import settings
    from django.utils.module_loading import module_has_submodule

    found: list[str] = []
    for app in apps.get_app_configs():
        if module_has_submodule(app.module, "schedules"):
            found.append(f"{app.name}.schedules")
    try:
        extra = read_side_setting(SCHEDULES, getattr(settings, SETTING, None))
    except SideSettingError as exc:
        raise InvalidScheduleError(f"{exc} (module paths)") from None
    for module in extra:
        if module not in found:
            found.append(module)
    return found


def _load(path: str) -> ModuleType:
    try:
        return import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name and (path == exc.name or path.startswith(exc.name + ".")):
            raise InvalidScheduleError(f'{SETTING}: no module named "{path}"') from None
        raise


def discover_schedules() -> list[Schedule]:
    """Import every schedule module and return its ``SCHEDULES``, in module order.

    A module without ``SCHEDULES``, an item that is not a :class:`Schedule`, or one name
    used twice raises :class:`~toolkit_batteries.scheduler.base.InvalidScheduleError`.
    """
    collected: list[Schedule] = []
    origin: dict[str, str] = {}
    for path in schedule_modules():
        module = _load(path)
        entries = getattr(module, "SCHEDULES", None)
        if not isinstance(entries, list | tuple):
            raise InvalidScheduleError(f"{path}: define SCHEDULES = [Schedule(...), ...]")
        for item in entries:
            if not isinstance(item, Schedule):
                raise InvalidScheduleError(f"{path}: SCHEDULES holds {item!r}, not a Schedule")
            if item.name in origin:
                raise InvalidScheduleError(
                    f'schedule "{item.name}" is defined twice ({origin[item.name]} and {path})'
                )
            origin[item.name] = path
            collected.append(item)
    return collected


def resolve_job(job: Any) -> Any:
    """Return the queue job ``job`` names (a ``Job`` is returned as it is).

    Raises ``UnknownJobError`` when no job of that name is registered, even after
    importing the module part of a dotted name.
    """
    from toolkit_batteries.queue.jobs import Job, UnknownJobError, registry

    if isinstance(job, Job):
        return job
    name = str(job)
    found = registry.get(name)
    if found is not None:
        return found
    module_path, _, attribute = name.rpartition(".")
    if module_path:
        try:
            module = import_module(module_path)
        except ModuleNotFoundError as exc:
            if not exc.name or not (
                module_path == exc.name or module_path.startswith(exc.name + ".")
            ):
                raise
        else:
            found = registry.get(name)
            if found is None:
                candidate = getattr(module, attribute, None)
                found = candidate if isinstance(candidate, Job) else None
            if found is not None:
                return found
    raise UnknownJobError(name)

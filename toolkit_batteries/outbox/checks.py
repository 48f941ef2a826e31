"""System checks of the ``outbox`` battery (``manage.py check``).

* ``toolkit_outbox.E001`` (from :class:`~toolkit_batteries.core.apps.BatteryConfig`):
  an instance's adapter does not resolve.
* ``toolkit_outbox.E002``: an option is out of range (``batch_size``, ``lock_seconds``,
  ``max_attempts`` below 1, a negative ``retention``, a non-positive ``poll_interval``,
  a ``notify_channel`` that is not an identifier); opening would fail the same way.
* ``toolkit_outbox.E003``: ``table`` or ``inbox_table`` names another table than the
  migrated ``toolkit_outbox_message`` / ``toolkit_outbox_inbox``.
* ``toolkit_outbox.E004``: the ``dsn`` does not parse as a PostgreSQL URL, a libpq
  string or a SQLite path.
* ``toolkit_outbox.E005``: a ``cdc`` instance's ``slot`` or ``publication`` is not a SQL
  identifier, or its ``prefix`` is empty.

Checks never connect. Messages name the instance and the field, never the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances, sql_target_error
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError

from .base import settings_from_options

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def battery_checks(config: Config) -> Iterator[checks.CheckMessage]:
    """Check every ``outbox`` instance's options."""
    from .adapters.db import check_tables

    for cfg, adapter in resolved_instances(config, "outbox"):
        options, instance = cfg.options, cfg.instance
        try:
            settings_from_options(options, instance=instance)
        except InvalidOptionsError as exc:
            yield checks.Error(str(exc), obj=_OBJ, id="toolkit_outbox.E002")
        if adapter == "memory":
            continue
        try:
            check_tables(options, instance=instance)
        except InvalidOptionsError as exc:
            yield checks.Error(
                str(exc),
                hint='leave table "outbox" and inbox_table "inbox"',
                obj=_OBJ,
                id="toolkit_outbox.E003",
            )
        if error := sql_target_error(
            f"outbox.{instance}",
            options.dsn,
            hint="give a postgres:// URL, a libpq string or a SQLite file path; "
            "leave it empty to use the db service",
            check_id="toolkit_outbox.E004",
        ):
            yield error
        if adapter == "cdc":
            for name in ("slot", "publication"):
                if not _IDENT.fullmatch(str(getattr(options, name) or "")):
                    yield checks.Error(
                        f'outbox.{instance}: option "{name}" must be a SQL identifier',
                        obj=_OBJ,
                        id="toolkit_outbox.E005",
                    )
            if not str(options.prefix or ""):
                yield checks.Error(
                    f'outbox.{instance}: option "prefix" must not be empty',
                    obj=_OBJ,
                    id="toolkit_outbox.E005",
                )

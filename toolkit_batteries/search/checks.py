"""System checks of the ``search`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_search.E001`` (each instance's adapter resolves):

* ``toolkit_search.E002``: ``searchengine`` without a ``host``, or with one the outbound
  rules refuse (http without ``allow_insecure``; a literal private or loopback address
  without ``allow_private``; credentials, query or fragment in the URL).
* ``toolkit_search.E003``: ``db`` with a ``dsn`` that is not a SQL target.
* ``toolkit_search.E004``: ``language`` is not a text search configuration name.

Messages name instances and fields, never values. Nothing connects or resolves.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances, sql_target_error
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import check_url

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"
_LANGUAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?\Z")


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``search`` instance's address, DSN and language."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "search"):
        where, options = f"search.{cfg.instance}", cfg.options
        if adapter == "searchengine":
            message = ""
            if not str(options.host or "").strip():
                message = f'{where}: option "host" is required by the searchengine adapter'
            else:
                try:
                    check_url(
                        str(options.host).strip(),
                        service="search",
                        field="host",
                        instance=cfg.instance,
                        allow_insecure=bool(options.allow_insecure),
                        allow_private=bool(options.allow_private),
                    )
                except InvalidOptionsError as exc:
                    message = str(exc)
            if message:
                found.append(
                    checks.Error(
                        message,
                        hint="set host to the search server's https:// URL (allow_insecure "
                        "permits http, allow_private a private or loopback address)",
                        obj=_OBJ,
                        id="toolkit_search.E002",
                    )
                )
        if adapter == "db" and (
            error := sql_target_error(
                where,
                options.dsn,
                hint="use a postgres:// URL, a libpq string or a SQLite file path",
                check_id="toolkit_search.E003",
            )
        ):
            found.append(error)
        if adapter == "db" and options.language and not _LANGUAGE.match(options.language):
            found.append(
                checks.Error(
                    f'{where}: option "language" is not a text search configuration name',
                    hint="use a configuration such as english, simple or german",
                    obj=_OBJ,
                    id="toolkit_search.E004",
                )
            )
    return found

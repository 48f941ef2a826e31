"""System checks of the ``vectorstore`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_vectorstore.E001`` (each instance's adapter resolves):

* ``toolkit_vectorstore.E002``: ``db`` with a ``dsn`` that is not a SQL target.
* ``toolkit_vectorstore.E003``: ``dimension`` is not between 1 and 16000.
* ``toolkit_vectorstore.E004``: ``vecengine`` with a ``url`` that is neither empty, a
  ``file:///`` path nor an allowed http(s) URL (``http://`` needs ``allow_insecure``).

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances, sql_target_error
from toolkit_batteries.core.errors import InvalidOptionsError

from .base import MAX_DIMENSION

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``vectorstore`` instance's target and dimension."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "vectorstore"):
        where, options = f"vectorstore.{cfg.instance}", cfg.options
        if adapter == "db" and (
            error := sql_target_error(
                where,
                options.dsn,
                hint="use a postgres:// URL, a libpq string or a SQLite file path",
                check_id="toolkit_vectorstore.E002",
            )
        ):
            found.append(error)
        if not 0 < options.dimension <= MAX_DIMENSION:
            found.append(
                checks.Error(
                    f'{where}: option "dimension" is not between 1 and {MAX_DIMENSION}',
                    hint="set it to your embedding model's output size (1536 by default)",
                    obj=_OBJ,
                    id="toolkit_vectorstore.E003",
                )
            )
        url = str(options.url or "").strip()
        if adapter == "vecengine" and url and not url.lower().startswith("file:///"):
            from toolkit_batteries.core.outbound import check_url

            try:
                check_url(
                    url,
                    service="vectorstore",
                    field="url",
                    instance=cfg.instance,
                    allow_insecure=bool(options.allow_insecure),
                    allow_private=True,
                )
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="leave url empty (in-process engine), use file:///<dir> or "
                        "https://host:port (http:// needs allow_insecure)",
                        obj=_OBJ,
                        id="toolkit_vectorstore.E004",
                    )
                )
    return found

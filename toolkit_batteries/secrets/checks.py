"""System checks of the ``secrets`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_secrets.E002``: ``prefix`` is unusable for the adapter (``env``: not a
  variable name; ``secretstore``: not a KV path).
* ``toolkit_secrets.E003``: ``secretstore`` with an ``addr`` that is missing, not an
  https URL (http without ``allow_insecure``), carries credentials, or is a literal
  private address without ``allow_private``; or a ``mount`` that is not a KV path.
* ``toolkit_secrets.E004``: ``secretstore`` with neither ``token`` nor ``token_file``.
* ``toolkit_secrets.W001``: ``project_id`` or ``region`` is set, which neither adapter
  reads.

Messages name instances and fields, never values. Nothing connects and no file is read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"
_ENV_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``secrets`` instance's prefix, address and token source."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "secrets"):
        where, options = f"secrets.{cfg.instance}", cfg.options
        prefix = (options.prefix or "").strip()
        pattern = _ENV_PREFIX if adapter == "env" else _PATH
        if not pattern.fullmatch(prefix.strip("/") if adapter != "env" else prefix):
            found.append(
                checks.Error(
                    f'{where}: option "prefix" is not usable by the {adapter} adapter',
                    hint="env: letters, digits and _ (not starting with a digit); "
                    "secretstore: /-separated segments of letters, digits, _ . -",
                    obj=_OBJ,
                    id="toolkit_secrets.E002",
                )
            )
        if adapter == "secretstore":
            found.extend(_store_checks(where, cfg.instance, options))
    return found


def _store_checks(where: str, instance: str, options) -> list[checks.CheckMessage]:
    from .adapters.vault import check_addr, check_mount

    found: list[checks.CheckMessage] = []
    try:
        check_addr(
            options.addr,
            allow_insecure=bool(options.allow_insecure),
            allow_private=bool(options.allow_private),
            instance=instance,
        )
        check_mount(options.mount, instance)
    except InvalidOptionsError as exc:
        found.append(
            checks.Error(
                str(exc),
                hint="addr is an https:// URL of the secrets server without credentials; "
                "allow_insecure permits http, allow_private private addresses",
                obj=_OBJ,
                id="toolkit_secrets.E003",
            )
        )
    if not options.token and not (options.token_file or "").strip():
        found.append(
            checks.Error(
                f'{where}: option "token" or "token_file" is required by the secretstore adapter',
                hint="set SECRETS__DEFAULT__TOKEN_FILE to a file of mode 0600 holding the token",
                obj=_OBJ,
                id="toolkit_secrets.E004",
            )
        )
    return found

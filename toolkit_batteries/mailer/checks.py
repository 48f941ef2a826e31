"""System checks of the ``mailer`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_mailer.E002``: ``smtp`` with only one of ``username`` and ``password`` set
  (Django would then skip ``AUTH`` silently).
* ``toolkit_mailer.E003``: ``timeout`` or ``max_message_size`` is negative.
* ``toolkit_mailer.E004``: ``provider`` whose ``backend_path`` is empty, does not import, or
  is not a Django e-mail backend class.
* ``toolkit_mailer.W001``: ``smtp`` sends credentials with ``encryption`` ``none``.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``mailer`` instance's credentials, encryption and bounds."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "mailer"):
        where, options = f"mailer.{cfg.instance}", cfg.options
        if adapter == "smtp":
            has_user, has_password = bool(options.username), bool(options.password)
            if has_user != has_password:
                found.append(
                    checks.Error(
                        f'{where}: option "{"password" if has_user else "username"}" is '
                        f'empty while "{"username" if has_user else "password"}" is set',
                        hint="set both username and password for SMTP AUTH, or neither",
                        obj=_OBJ,
                        id="toolkit_mailer.E002",
                    )
                )
            if has_password and options.encryption == "none":
                found.append(
                    checks.Warning(
                        f'{where}: the SMTP password is sent unencrypted (option "encryption")',
                        hint='use "starttls" (default) or "tls"',
                        obj=_OBJ,
                        id="toolkit_mailer.W001",
                    )
                )
        if adapter == "provider":
            from .adapters.provider import provider_backend

            try:
                provider_backend(options.backend_path, cfg.instance)
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint='set "backend_path" to a dotted path such as '
                        '"anymail.backends.postmark.EmailBackend"',
                        obj=_OBJ,
                        id="toolkit_mailer.E004",
                    )
                )
    return found

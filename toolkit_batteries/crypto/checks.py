"""System checks of the ``crypto`` battery (``manage.py check``).

* ``toolkit_crypto.E001`` (from :class:`~toolkit_batteries.core.apps.BatteryConfig`): an
  instance's adapter does not resolve.
* ``toolkit_crypto.E002``: the ``local`` adapter's ``key`` or ``sign_key`` does not parse
  (not base64, wrong length, a bad or repeated key id).
* ``toolkit_crypto.E003`` (``check --deploy`` only): the ``local`` adapter would use the
  public development key, and neither ``TOOLKIT_ENV`` nor ``allow_dev_key`` permits it.
  A plain ``check`` stays quiet about it, so development needs no setting; the service
  itself refuses the key when it opens.

Messages name instances and fields, never values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.core import checks

from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks", "deploy_checks"]

_OBJ = "settings.TOOLKIT"


def _local_instances(config: Config) -> Iterable[tuple[str, Any]]:
    from toolkit_batteries.core.loading import resolve_adapter

    for instance in config.instances("crypto"):
        cfg = config.service("crypto", instance)
        try:
            adapter, _ = resolve_adapter("crypto", cfg.adapter)
        except ConfigurationError:
            continue  # toolkit_crypto.E001 reports it
        if adapter == "local":
            yield cfg.instance, cfg.options


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check that every ``local`` instance's key options parse."""
    from .base import parse_keyring

    found: list[checks.CheckMessage] = []
    for instance, options in _local_instances(config):
        fields = [("key", options.key, 32)]
        if options.sign_key.strip():
            fields.append(("sign_key", options.sign_key, 64))
        for field, text, size in fields:
            try:
                parse_keyring(text, size=size, field=field, instance=instance)
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint=f"one base64 key of {size} bytes, or kid:base64 entries "
                        "separated by commas (active key first)",
                        obj=_OBJ,
                        id="toolkit_crypto.E002",
                    )
                )
    return found


def deploy_checks(config: Config) -> list[checks.CheckMessage]:
    """Report ``local`` instances that would use the public development key."""
    from .base import b64decode_any, dev_key_allowed, parse_keyring
    from .options import DEVELOPMENT_KEY

    dev_key = b64decode_any(DEVELOPMENT_KEY)
    found: list[checks.CheckMessage] = []
    for instance, options in _local_instances(config):
        try:
            ring = parse_keyring(options.key, size=32, field="key", instance=instance)
        except InvalidOptionsError:
            continue  # toolkit_crypto.E002 reports it
        if any(key == dev_key for _kid, key in ring) and not dev_key_allowed(options.allow_dev_key):
            found.append(
                checks.Error(
                    f'crypto.{instance}: option "key" is the public development key',
                    hint="set CRYPTO__DEFAULT__KEY to base64 of 32 random bytes "
                    '(python -c "import os, base64; print(base64.b64encode(os.urandom(32))'
                    '.decode())")',
                    obj=_OBJ,
                    id="toolkit_crypto.E003",
                )
            )
    return found
